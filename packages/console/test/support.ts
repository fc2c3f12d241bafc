import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { generateToken, hashToken, type TeamRole } from '@palisade/protocol';
import type { FastifyInstance, InjectOptions } from 'fastify';
import pg from 'pg';
import { buildApp } from '../src/app.js';
import { type ConsoleConfig, loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import type { Database } from '../src/db/schema.js';
import { insertTeamMember } from '../src/repositories/team-members.repository.js';
import { TEST_ENV } from './console-process.js';
import { isDocumented, openApiMismatch, openApiPath } from './openapi-check.js';

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
    ...TEST_ENV,
    PALISADE_DATA_DIR: database.dataDir,
    ...(database.databaseUrl
      ? { PALISADE_DATABASE_URL: database.databaseUrl, PALISADE_DATABASE_SCHEMA: database.databaseSchema! }
      : {}),
    ...env,
  });
  const clock = testClock();
  const app = await buildApp({ config, db: database.db, clock: () => clock.now });
  const mismatches = holdAnswersToOpenApi(app);
  await app.services.catalog.seed();
  return {
    app,
    db: database.db,
    clock,
    config,
    async close() {
      await app.close();
      await database.close();
      // Also caught here, in case the test that got the 500 did not look at the status.
      assert.deepEqual(mismatches, [], 'answers that do not match the OpenAPI document');
    },
  };
}

/**
 * Every JSON answer of a route the OpenAPI document describes is checked against it
 * (packages/protocol/src/openapi.ts): one that does not match becomes a 500 naming the mismatch, so
 * the test that triggered it fails, and is listed again when the app closes.
 */
export function holdAnswersToOpenApi(app: FastifyInstance): string[] {
  const mismatches: string[] = [];
  app.addHook('onSend', async (request, reply, payload) => {
    const route = request.routeOptions.url;
    if (route === undefined || reply.statusCode === 500) return payload;
    const path = openApiPath(route);
    if (!isDocumented(path, request.method)) return payload;
    const type = String(reply.getHeader('content-type') ?? '');
    // Read as the client reads it: compressed answers (plugins/compression.ts) are decoded first.
    const raw = typeof payload === 'string' ? Buffer.from(payload) : Buffer.isBuffer(payload) ? payload : null;
    const encoding = reply.getHeader('content-encoding');
    const decoded =
      raw === null ? null : encoding === 'br' ? brotliDecompressSync(raw) : encoding === 'gzip' ? gunzipSync(raw) : raw;
    const text = decoded?.toString('utf8') ?? null;
    let body: unknown;
    try {
      if (!/^application\/json\s*(;|$)/i.test(type) || text === null) throw new Error(`answered ${type || 'no type'}`);
      body = JSON.parse(text);
    } catch (err) {
      body = undefined;
      mismatches.push(`${reply.statusCode} ${request.method} ${path}: not JSON (${(err as Error).message})`);
      throw new Error(mismatches.at(-1));
    }
    const mismatch = openApiMismatch(path, request.method, reply.statusCode, body);
    if (mismatch === null) return payload;
    mismatches.push(mismatch);
    throw new Error(mismatch);
  });
  return mismatches;
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

/** Makes `person` a member of the team with `role` at the test clock's time, as an accepted invitation does. */
export function joinTeam(t: Pick<TestApp, 'db' | 'clock'>, teamId: number, person: { id: number }, role: TeamRole) {
  return insertTeamMember(t.db, {
    account_id: teamId,
    person_id: person.id,
    role,
    granted: '[]',
    revoked: '[]',
    created_at: t.clock.now,
  });
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

/**
 * Adds a product and a server row directly, as later issues' check-ins would, and publishes the change
 * as every writer of servers does (src/services/coherence/), so cached v1 answers see it.
 */
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
    product_id: number;
  }> = {},
) {
  const products = await app.services.catalog.products(user.id);
  const product =
    products.find((p) => p.id === fields.product_id) ??
    products[0] ??
    (await app.services.catalog.addProduct(user.id, 3));
  const row = await app.db
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
  await app.services.coherence.changed(user.id);
  return row;
}

/** A server with a daemon token, as enrolment leaves it: its id and the raw token its check-ins carry. */
export async function enrolledTestServer(
  app: FastifyInstance,
  user: TestUser,
  fields: Parameters<typeof insertTestServer>[2] = { hostname: null, public_ip: null },
) {
  const server = await insertTestServer(app, user, fields);
  const daemon = generateToken('daemon');
  await app.db
    .updateTable('servers')
    .set({ daemon_token_hash: hashToken(daemon) })
    .where('id', '=', server.id)
    .execute();
  return { serverId: server.id, daemon };
}

/** A check-in sample at `ts` (epoch ms) with `cpu` per cent, the other figures fixed. */
export const testSample = (ts: number, cpu = 10) => ({
  ts,
  cpu_pct: cpu,
  mem_used_mb: 2000,
  mem_total_mb: 8000,
  disk_used_pct: 40,
  load1: 0.3,
  rx_bps: 1000,
  tx_bps: 500,
  disk_mount: '/',
});
/** A stand-in agent on loopback that answers the control API's whitelist read (or `status`) until it is closed. */
export function standInAgent(status: () => number = () => 200) {
  return http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const code = status();
      res
        .writeHead(code, { 'content-type': 'application/json' })
        .end(code === 200 ? '{"entries":[]}' : '{"error":"no"}');
    });
  });
}

/** A benchmark report as the agent sends it (cores 4, 8000 MB: verified against those facts). */
export function benchmarkReport(overrides: Record<string, unknown> = {}) {
  return {
    measurements: {
      cpu: { single_mb_s: 400, multi_mb_s: 1500, threads: 4 },
      disk: { seq_write_mb_s: 300, seq_read_mb_s: 900, rand_write_iops: 2500 },
      network: { down_mbit_s: 900, up_mbit_s: 800, latency_ms: 0.4 },
      stability: { cpu_cv_pct: 2, steal_pct: 0.5 },
    },
    skipped: {},
    hardware: { cores: 4, mem_total_mb: 8000, cpu_model: 'Test CPU', arch: 'x64' },
    duration_ms: 42_000,
    ...overrides,
  };
}
