import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { type ConsoleConfig, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import type { Database } from '../src/db/schema.js';

export type DialectName = 'sqlite' | 'postgres';

/** SQLite always; PostgreSQL too when PALISADE_TEST_DATABASE_URL is set. PALISADE_TEST_DIALECTS narrows the list. */
export function dialects(): DialectName[] {
  const all: DialectName[] = process.env.PALISADE_TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];
  const only = process.env.PALISADE_TEST_DIALECTS?.split(',');
  if (!process.env.PALISADE_TEST_DATABASE_URL && process.env.CI) {
    throw new Error('CI: PALISADE_TEST_DATABASE_URL is not set, so the PostgreSQL suite would be skipped');
  }
  return only ? all.filter((d) => only.includes(d)) : all;
}

export interface TestClock {
  now: number;
  advance(ms: number): void;
}

export function testClock(start = Date.UTC(2026, 10, 22, 12, 0, 0)): TestClock {
  return {
    now: start,
    advance(ms) {
      this.now += ms;
    },
  };
}

export interface TestDatabase {
  dataDir: string;
  databaseUrl: string | null;
  databaseSchema: string | null;
  db: Database;
  close(): Promise<void>;
}

/** A freshly migrated database of its own: a temp SQLite file, or a new PostgreSQL schema dropped afterwards. */
export async function testDatabase(dialect: DialectName): Promise<TestDatabase> {
  const dataDir = mkdtempSync(join(tmpdir(), 'palisade-test-'));
  const databaseUrl = dialect === 'postgres' ? process.env.PALISADE_TEST_DATABASE_URL! : null;
  const databaseSchema = dialect === 'postgres' ? `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}` : null;
  const handle = await openDatabase({ dataDir, databaseUrl, databaseSchema });
  return {
    dataDir,
    databaseUrl,
    databaseSchema,
    db: handle.db,
    async close() {
      await handle.close();
      if (databaseUrl && databaseSchema) await dropSchema(databaseUrl, databaseSchema);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function dropSchema(url: string, schema: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

export interface TestApp {
  app: FastifyInstance;
  db: Database;
  clock: TestClock;
  config: ConsoleConfig;
  close(): Promise<void>;
}

export async function testApp(dialect: DialectName, env: Record<string, string> = {}): Promise<TestApp> {
  const database = await testDatabase(dialect);
  const config = loadConfig({
    PALISADE_DATA_DIR: database.dataDir,
    ...(database.databaseUrl
      ? { PALISADE_DATABASE_URL: database.databaseUrl, PALISADE_DATABASE_SCHEMA: database.databaseSchema! }
      : {}),
    ...env,
  });
  const clock = testClock();
  const app = await buildApp({ config, db: database.db, clock: () => clock.now });
  await app.services.catalog.seed();
  return {
    app,
    db: database.db,
    clock,
    config,
    async close() {
      await app.close();
      await database.close();
    },
  };
}

export function json(body: unknown): Pick<InjectOptions, 'payload' | 'headers'> {
  return { payload: JSON.stringify(body), headers: { 'content-type': 'application/json' } };
}

let counter = 0;
export function uniqueEmail(prefix = 'user'): string {
  counter += 1;
  return `${prefix}${counter}-${process.pid}@example.com`;
}

export interface TestUser {
  id: number;
  email: string;
  password: string;
  cookie: string;
}

export function sessionCookieFrom(setCookie: string | string[] | undefined): string {
  const header = Array.isArray(setCookie) ? setCookie[0] : setCookie;
  const match = /pl_session=([^;]*)/.exec(header ?? '');
  if (!match?.[1]) throw new Error(`no pl_session cookie in ${header}`);
  return `pl_session=${match[1]}`;
}

export async function registerUser(app: FastifyInstance, ip = '127.0.0.1'): Promise<TestUser> {
  const email = uniqueEmail();
  const password = 'correct horse battery';
  const res = await app.inject({
    method: 'POST',
    url: '/api/auth/register',
    remoteAddress: ip,
    ...json({ email, password, name: 'Test User' }),
  });
  if (res.statusCode !== 201) throw new Error(`register failed: ${res.statusCode} ${res.body}`);
  return { id: res.json().data.account.id, email, password, cookie: sessionCookieFrom(res.headers['set-cookie']) };
}

export async function createToken(app: FastifyInstance, user: TestUser, name = 'ci'): Promise<string> {
  const res = await app.inject({
    method: 'POST',
    url: '/api/tokens',
    headers: { cookie: user.cookie, 'content-type': 'application/json' },
    payload: JSON.stringify({ name }),
  });
  if (res.statusCode !== 201) throw new Error(`token failed: ${res.statusCode} ${res.body}`);
  return res.json().data.token;
}

/** Adds a product and a server row directly, as later issues' check-ins would. */
export async function insertTestServer(
  app: FastifyInstance,
  user: TestUser,
  fields: Partial<{
    name: string;
    hostname: string | null;
    last_seen: number | null;
    public_ip: string | null;
    facts: object;
    latest_sample: object | null;
    score_base: object | null;
  }> = {},
) {
  const products = await app.services.catalog.products(user.id);
  const product = products[0] ?? (await app.services.catalog.addProduct(user.id, 3));
  return app.db
    .insertInto('servers')
    .values({
      account_id: user.id,
      product_id: product.id,
      name: fields.name ?? 'web-1',
      api_url: 'http://10.0.0.5:9100',
      api_key_enc: 'not-a-real-key',
      hostname: fields.hostname === undefined ? 'web-1.example.net' : fields.hostname,
      public_ip: fields.public_ip === undefined ? '203.0.113.7' : fields.public_ip,
      facts: JSON.stringify(fields.facts ?? { os: 'Debian 12', kernel: '6.1.0', cores: 2 }),
      agent_version: null,
      daemon_token_hash: null,
      last_seen: fields.last_seen === undefined ? null : fields.last_seen,
      latest_sample: fields.latest_sample ? JSON.stringify(fields.latest_sample) : null,
      score_base: fields.score_base ? JSON.stringify(fields.score_base) : null,
      score_base_total: fields.score_base
        ? Object.values((fields.score_base as { components: Record<string, number> }).components).reduce(
            (a, b) => a + b,
            0,
          )
        : null,
      created_at: app.clock(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}
