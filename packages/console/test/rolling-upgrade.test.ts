import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runToEnd } from '@palisade/testkit';
import pg from 'pg';
import { type ConsoleProcess, startConsoleProcess } from './console-process.js';
import { dialects, dropSchema } from './support.js';

const here = dirname(fileURLToPath(import.meta.url)); // packages/console/dist/test
const checkout = join(here, '..', '..', '..', '..');
const git = (...args: string[]) => execFileSync('git', ['-C', checkout, ...args], { encoding: 'utf8' }).trim();

/**
 * The previous release: this checkout's history just before the newest migration landed, extracted
 * with `git archive` into the temp dir and built once (kept by commit and checkout, so later runs reuse it). Its
 * node_modules link to this checkout's (offline: nothing to install), its own packages to its own.
 */
async function previousRelease(): Promise<{ commit: string; cli: string }> {
  const migrations = join(checkout, 'packages', 'console', 'src', 'db', 'migrations');
  const newest = readdirSync(migrations)
    .filter((f) => /^\d{4}-.*\.ts$/.test(f))
    .sort()
    .at(-1)!;
  const landed = git(
    'log',
    '--first-parent',
    '-1',
    '--format=%H',
    '--',
    `packages/console/src/db/migrations/${newest}`,
  );
  if (!landed)
    throw new Error(`no commit adds ${newest}: this test needs the repository's history (git fetch --unshallow)`);
  const commit = git('rev-parse', `${landed}^1`);
  // Its links point into this checkout's node_modules, so a build is this checkout's alone: one made
  // by another clone (since removed, or installed differently) would import through dangling links.
  const modules = join(checkout, 'node_modules');
  const owner = createHash('sha256').update(modules).digest('hex').slice(0, 12);
  const dir = join(tmpdir(), `palisade-release-${commit}-${owner}`);
  const cli = join(dir, 'packages', 'console', 'dist', 'src', 'cli.js');
  if (existsSync(join(dir, '.palisade-built')) && linksResolve(modules, join(dir, 'node_modules')))
    return { commit, cli };
  const staging = `${dir}.${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  execFileSync('sh', ['-c', `git -C "${checkout}" archive "${commit}" | tar -x -C "${staging}"`]);
  mkdirSync(join(staging, 'node_modules', '@palisade'), { recursive: true });
  for (const name of readdirSync(modules)) {
    if (name !== '@palisade') symlinkSync(join(modules, name), join(staging, 'node_modules', name));
  }
  for (const name of readdirSync(join(staging, 'packages'))) {
    symlinkSync(join('..', '..', 'packages', name), join(staging, 'node_modules', '@palisade', name));
  }
  // Only what a console process runs: its TypeScript and the protocol's (no dashboard, no agent bundle).
  const tsc = join(checkout, 'node_modules', 'typescript', 'bin', 'tsc');
  const projects = ['protocol', 'testkit', 'console'].map((p) => join(staging, 'packages', p));
  const built = await runToEnd(process.execPath, [tsc, '-b', ...projects], { env: process.env });
  if (built.code !== 0) throw new Error(`building the previous release ${commit} failed:\n${built.out}`);
  writeFileSync(join(staging, '.palisade-built'), `${commit}\n`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(staging, dir);
  return { commit, cli };
}

/** Whether a kept build still links every package this checkout has installed (existsSync follows links). */
function linksResolve(modules: string, linked: string): boolean {
  return readdirSync(modules)
    .filter((name) => name !== '@palisade' && !name.startsWith('.'))
    .every((name) => existsSync(join(linked, name)));
}

const url = process.env.PALISADE_TEST_DATABASE_URL ?? '';

/**
 * Migrations that move data rather than only add, so the release before them cannot serve beside
 * them: the operator stops every console process first (docs/deploy.md, "Upgrading to teams").
 * While one of them is the newest there is no rolling upgrade to hold; the next migration brings
 * the test back, with the release that has it as the previous one.
 */
const STOP_FIRST = ['0028-teams.ts'];
const newestMigration = readdirSync(join(checkout, 'packages', 'console', 'src', 'db', 'migrations'))
  .filter((f) => /^\d{4}-.*\.ts$/.test(f))
  .sort()
  .at(-1)!;

for (const dialect of dialects().filter((d) => d === 'postgres')) {
  describe(`rolling upgrade (${dialect})`, () => {
    const schema = `roll_${process.pid}`;
    const env = {
      PALISADE_DATABASE_URL: url,
      PALISADE_DATABASE_SCHEMA: schema,
      PALISADE_DATA_DIR: join(tmpdir(), `palisade-roll-${process.pid}`),
    };
    const consoles: ConsoleProcess[] = [];
    let release: { commit: string; cli: string };
    before(async () => {
      release = await previousRelease();
    });
    after(async () => {
      for (const c of consoles) await c.kill();
      await dropSchema(url, schema);
      rmSync(env.PALISADE_DATA_DIR, { recursive: true, force: true });
    });

    const call = async (base: string, method: string, path: string, body?: unknown, auth = '') => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          ...(auth.startsWith('pl_session=') ? { cookie: auth } : auth ? { authorization: `Bearer ${auth}` } : {}),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: await res.text(), cookie: res.headers.get('set-cookie') ?? '' };
    };
    /** Signs up on `base` and makes a v1 token there: the writes a console serves most. */
    const signUpWithSession = async (base: string, email: string) => {
      const registered = await call(base, 'POST', '/api/auth/register', {
        email,
        password: 'correct horse battery',
        name: 'Roll',
      });
      assert.equal(registered.status, 201, registered.body);
      const cookie = /pl_session=[^;]*/.exec(registered.cookie)![0];
      const token = await call(base, 'POST', '/api/tokens', { name: 'ci' }, cookie);
      assert.equal(token.status, 201, token.body);
      return { token: JSON.parse(token.body).data.token as string, cookie };
    };
    const signUp = async (base: string, email: string) => (await signUpWithSession(base, email)).token;
    const me = async (base: string, token: string) => {
      const res = await call(base, 'GET', '/api/v1/me', undefined, token);
      assert.equal(res.status, 200, `${base}: ${res.body}`);
      const data = JSON.parse(res.body).data;
      return (data.email ?? data.account?.email) as string;
    };

    // A migration that moves data: the previous release is stopped, then this one migrates and serves
    // everything it wrote (docs/deploy.md). The next migration brings the side-by-side test back.
    if (STOP_FIRST.includes(newestMigration))
      test(`${newestMigration}: with the previous release stopped first, this one serves everything it wrote`, async () => {
        const old = await startConsoleProcess(env, [], release.cli);
        consoles.push(old);
        const email = `before-${process.pid}@example.com`;
        const before = await signUp(old.url, email);
        await old.kill();
        const current = await startConsoleProcess(env);
        consoles.push(current);
        assert.equal(await me(current.url, before), email, 'the token made before the upgrade');
        const signedIn = await call(current.url, 'POST', '/api/auth/login', {
          email,
          password: 'correct horse battery',
        });
        assert.equal(signedIn.status, 200, signedIn.body);
        const teams = await call(
          current.url,
          'GET',
          '/api/teams',
          undefined,
          /pl_session=[^;]*/.exec(signedIn.cookie)![0],
        );
        assert.equal(teams.status, 200, teams.body);
        assert.deepEqual(
          JSON.parse(teams.body).data.teams.map((t: { role: string }) => t.role),
          ['owner'],
          'the account became a team of one with its owner',
        );
        const fresh = await signUp(current.url, `fresh-${process.pid}@example.com`);
        assert.equal(await me(current.url, fresh), `fresh-${process.pid}@example.com`);
      });
    else
      test('the previous release keeps serving while this one migrates the same database', async () => {
        const old = await startConsoleProcess(env, [], release.cli);
        consoles.push(old);
        const before = await signUp(old.url, `before-${process.pid}@example.com`);
        const current = await startConsoleProcess(env);
        consoles.push(current);
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        const applied = (await client.query(`SELECT name FROM "${schema}".kysely_migration ORDER BY name`)).rows.map(
          (r) => r.name as string,
        );
        await client.end();
        const newest = readdirSync(join(checkout, 'packages', 'console', 'src', 'db', 'migrations'))
          .filter((f) => /^\d{4}-/.test(f))
          .sort()
          .at(-1)!;
        assert.equal(applied.at(-1), newest.replace(/\.ts$/, '').replaceAll('-', '_'), 'the new console migrated');
        // The old process, started before the migration, still reads and writes: a ticket too, whose
        // thread the new one answers (a column the old release does not know is left to its default).
        const { token: during, cookie } = await signUpWithSession(old.url, `during-${process.pid}@example.com`);
        const product = await call(old.url, 'POST', '/api/products', { catalog_id: 1 }, cookie);
        assert.equal(product.status, 201, product.body);
        const opened = await call(
          old.url,
          'POST',
          '/api/tickets',
          { product_id: JSON.parse(product.body).data.product.id, subject: 'Rolling', message: 'from the old release' },
          cookie,
        );
        assert.equal(opened.status, 201, opened.body);
        const thread = await call(
          current.url,
          'GET',
          `/api/tickets/${JSON.parse(opened.body).data.ticket.id}`,
          undefined,
          cookie,
        );
        assert.equal(thread.status, 200, thread.body);
        const messages = JSON.parse(thread.body).data.ticket.messages as { body: string; author_name?: string }[];
        assert.deepEqual(
          messages.map((m) => [m.body, typeof m.author_name === 'string' && m.author_name !== '']),
          [['from the old release', true]],
        );
        const fresh = await signUp(current.url, `fresh-${process.pid}@example.com`);
        for (const base of [old.url, current.url]) {
          assert.equal(await me(base, before), `before-${process.pid}@example.com`);
          assert.equal(await me(base, during), `during-${process.pid}@example.com`);
          assert.equal(await me(base, fresh), `fresh-${process.pid}@example.com`);
        }
      });
  });
}
