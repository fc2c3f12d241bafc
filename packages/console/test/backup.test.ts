import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import { migrationProvider } from '../src/db/migrations/index.js';
import { type ConsoleProcess, runConsoleCli, startConsoleProcess } from './console-process.js';
import { dialects, dropSchema } from './support.js';

/** A stand-in agent that answers (its health, the whitelist read) only to the agent key the console was given. */
function keyCheckingAgent(key: string) {
  return http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      const ok = req.headers.authorization === `Bearer ${key}`;
      const answer = req.url === '/health' ? '{"status":"ok","version":"0.0.0"}' : '{"entries":[]}';
      res
        .writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
        .end(ok ? answer : '{"error":"invalid agent key"}');
    });
  });
}

async function schemaExists(url: string, schema: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount !== 0;
  } finally {
    await client.end();
  }
}

for (const dialect of dialects()) {
  describe(`backup and restore (${dialect})`, () => {
    const url = process.env.PALISADE_TEST_DATABASE_URL ?? '';
    const root = mkdtempSync(join(tmpdir(), 'palisade-backup-test-'));
    const schemas: string[] = [];
    /** A console's settings of its own: a data dir, and on PostgreSQL a schema (dropped afterwards). */
    const place = (name: string) => {
      const env: Record<string, string> = { PALISADE_DATA_DIR: join(root, name), PALISADE_ALLOW_PRIVATE_TARGETS: '1' };
      if (dialect === 'postgres') {
        const schema = `bk_${process.pid}_${name}`;
        schemas.push(schema);
        Object.assign(env, { PALISADE_DATABASE_URL: url, PALISADE_DATABASE_SCHEMA: schema });
      }
      return env;
    };
    const agentKey = generateToken('agentKey');
    const agent = keyCheckingAgent(agentKey);
    const source = place('source');
    let running: ConsoleProcess;
    const filled = { email: `owner-${process.pid}@example.com`, token: '', cookie: '', serverId: 0, productId: 0 };
    const archive = join(root, 'console.backup');

    const call = async (base: string, method: string, path: string, body?: unknown, auth = filled.cookie) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          ...(auth.startsWith('pl_session=') ? { cookie: auth } : { authorization: `Bearer ${auth}` }),
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: await res.text(), headers: res.headers };
    };

    before(async () => {
      await new Promise<void>((resolve) => agent.listen(0, '127.0.0.1', resolve));
      running = await startConsoleProcess(source);
      const base = running.url;
      const registered = await call(base, 'POST', '/api/auth/register', {
        email: filled.email,
        password: 'correct horse battery',
        name: 'Owner',
      });
      assert.equal(registered.status, 201, registered.body);
      filled.cookie = /pl_session=[^;]*/.exec(registered.headers.get('set-cookie') ?? '')![0];
      const items = JSON.parse((await call(base, 'GET', '/api/catalog')).body).data.items;
      const product = await call(base, 'POST', '/api/products', { catalog_id: items[0].id });
      assert.equal(product.status, 201, product.body);
      filled.productId = JSON.parse(product.body).data.product.id;
      const server = await call(base, 'POST', '/api/servers', {
        product_id: filled.productId,
        name: 'edge-1',
        api_url: `http://127.0.0.1:${(agent.address() as AddressInfo).port}`,
        api_key: agentKey,
      });
      assert.equal(server.status, 201, server.body);
      filled.serverId = JSON.parse(server.body).data.server.id;
      const token = await call(base, 'POST', '/api/tokens', { name: 'ci' });
      assert.equal(token.status, 201, token.body);
      filled.token = JSON.parse(token.body).data.token;
      const channel = await call(base, 'POST', '/api/alerts/channels', {
        name: 'slack',
        kind: 'slack',
        url: `http://127.0.0.1:${(agent.address() as AddressInfo).port}/hook`,
      });
      assert.equal(channel.status, 201, channel.body);
      const rule = await call(base, 'POST', '/api/alerts/rules', {
        name: 'no answer',
        kind: 'unreachable',
        minutes: 5,
        channel_ids: [JSON.parse(channel.body).data.channel.id],
      });
      assert.equal(rule.status, 201, rule.body);
      const entry = await call(base, 'POST', '/api/fleet/entries', {
        list: 'black',
        ip: '198.51.100.20',
        scope: 'all',
      });
      assert.equal(entry.status, 201, entry.body);
    });
    after(async () => {
      await running?.kill();
      agent.close();
      for (const schema of schemas) await dropSchema(url, schema);
      rmSync(root, { recursive: true, force: true });
    });

    test('a backup taken while the console runs restores into a fresh console with everything working', async () => {
      const made = await runConsoleCli(source, ['backup', archive]);
      assert.equal(made.code, 0, made.out);
      assert.equal(lstatSync(archive).mode & 0o777, 0o600, 'the archive holds the secret key');
      const target = place('restored');
      const restored = await runConsoleCli(target, ['restore', archive]);
      assert.equal(restored.code, 0, restored.out);
      const fresh = await startConsoleProcess(target);
      try {
        const me = await call(fresh.url, 'GET', '/api/v1/me', undefined, filled.token);
        assert.equal(me.status, 200, me.body);
        assert.equal(JSON.parse(me.body).data.email ?? JSON.parse(me.body).data.account?.email, filled.email);
        // The agent answers only to the key the console stored sealed: this proves it still decrypts.
        const control = await call(fresh.url, 'GET', `/api/servers/${filled.serverId}/control?path=whitelist`);
        assert.equal(control.status, 200, control.body);
        assert.deepEqual(JSON.parse(control.body), { entries: [] });
        const products = JSON.parse((await call(fresh.url, 'GET', '/api/products')).body).data.products;
        assert.deepEqual(
          products.map((p: { id: number }) => p.id),
          [filled.productId],
        );
        const rules = JSON.parse((await call(fresh.url, 'GET', '/api/alerts/rules')).body).data.rules;
        assert.deepEqual(
          rules.map((r: { name: string }) => r.name),
          ['no answer'],
        );
        const entries = JSON.parse((await call(fresh.url, 'GET', '/api/fleet/entries')).body).data.entries;
        assert.deepEqual(
          entries.map((e: { address: string }) => e.address),
          ['198.51.100.20'],
        );
        // New rows get new ids: the id sequences moved past the restored rows.
        const another = await call(fresh.url, 'POST', '/api/tokens', { name: 'after restore' });
        assert.equal(another.status, 201, another.body);
      } finally {
        await fresh.kill();
      }
    });

    test('restore refuses a target that already holds a console, and writes nothing there', async () => {
      const refused = await runConsoleCli(source, ['restore', archive]);
      assert.notEqual(refused.code, 0);
      const expected =
        dialect === 'sqlite'
          ? /^palisade-console: the data directory .*source already holds a console database \(console\.db\); restore only into an empty one\n$/
          : new RegExp(
              `^palisade-console: the schema bk_${process.pid}_source is not empty .*restore only into an empty schema\\n$`,
            );
      assert.match(refused.out, expected);
      // Another key than the backup's would leave every encrypted column unreadable.
      const otherKey: Record<string, string> = { ...place('otherkey'), PALISADE_SECRET_KEY: 'cd'.repeat(32) };
      const keyRefused = await runConsoleCli(otherKey, ['restore', archive]);
      assert.notEqual(keyRefused.code, 0);
      assert.match(keyRefused.out, /^palisade-console: PALISADE_SECRET_KEY is not the key of this backup; /);
      assert.equal(existsSync(join(otherKey.PALISADE_DATA_DIR!, 'console.db')), false);
      if (dialect === 'postgres') assert.equal(await schemaExists(url, otherKey.PALISADE_DATABASE_SCHEMA!), false);
      // The running console still answers with its own data.
      assert.equal((await call(running.url, 'GET', '/api/v1/me', undefined, filled.token)).status, 200);
    });

    test('backup never replaces a file or follows a symlink without --force', async () => {
      const precious = join(root, 'precious');
      writeFileSync(precious, 'keep me');
      const link = join(root, 'link.backup');
      symlinkSync(precious, link);
      for (const file of [precious, link]) {
        const refused = await runConsoleCli(source, ['backup', file]);
        assert.notEqual(refused.code, 0);
        assert.equal(refused.out, `palisade-console: ${file} already exists; pass --force to replace it\n`);
      }
      const forced = await runConsoleCli(source, ['backup', link, '--force']);
      assert.equal(forced.code, 0, forced.out);
      assert.equal(readFileSync(precious, 'utf8'), 'keep me', 'the symlink is replaced, its target untouched');
      assert.equal(lstatSync(link).isSymbolicLink(), false);
      assert.equal(lstatSync(link).mode & 0o777, 0o600);
    });

    test('a cut-short or changed archive is refused in one line, nothing restored', async () => {
      const whole = readFileSync(archive);
      const cut = join(root, 'cut.backup');
      writeFileSync(cut, whole.subarray(0, whole.length - 100));
      const changed = join(root, 'changed.backup');
      const flipped = Buffer.from(whole);
      flipped[Math.floor(flipped.length / 2)]! ^= 0xff;
      writeFileSync(changed, flipped);
      for (const [file, why] of [
        [cut, /cut short/],
        [changed, /checksum does not match/],
      ] as const) {
        const target = place(file === cut ? 'cut' : 'changed');
        const refused = await runConsoleCli(target, ['restore', file]);
        assert.notEqual(refused.code, 0);
        assert.match(
          refused.out,
          new RegExp(`^palisade-console: ${file} is not a complete Palisade backup \\(.*\\)\\n$`),
        );
        assert.match(refused.out, why);
        assert.equal(existsSync(join(target.PALISADE_DATA_DIR!, 'console.db')), false);
        assert.equal(existsSync(join(target.PALISADE_DATA_DIR!, 'secret.key')), false);
        if (dialect === 'postgres') assert.equal(await schemaExists(url, target.PALISADE_DATABASE_SCHEMA!), false);
      }
    });

    test('restore refuses a backup of a newer schema version, naming it', async () => {
      const future = '9999_from_a_later_release';
      if (dialect === 'sqlite') {
        const db = new SQLite(join(source.PALISADE_DATA_DIR!, 'console.db'));
        db.pragma('busy_timeout = 5000');
        db.prepare('INSERT INTO kysely_migration (name, timestamp) VALUES (?, ?)').run(
          future,
          new Date().toISOString(),
        );
        db.close();
      } else {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        await client.query(
          `INSERT INTO "${source.PALISADE_DATABASE_SCHEMA}".kysely_migration (name, timestamp) VALUES ($1, $2)`,
          [future, new Date().toISOString()],
        );
        await client.end();
      }
      const newer = join(root, 'newer.backup');
      const made = await runConsoleCli(source, ['backup', newer]);
      assert.equal(made.code, 0, made.out);
      const target = place('newer');
      const refused = await runConsoleCli(target, ['restore', newer]);
      assert.notEqual(refused.code, 0);
      assert.equal(
        refused.out,
        `palisade-console: ${newer} comes from a newer console (schema version ${future}, unknown here); restore it with that version or later\n`,
      );
      assert.equal(existsSync(join(target.PALISADE_DATA_DIR!, 'console.db')), false);
      if (dialect === 'postgres') assert.equal(await schemaExists(url, target.PALISADE_DATABASE_SCHEMA!), false);
    });

    test('a backup of an older schema version is migrated forward on restore', async () => {
      const known = Object.keys(await migrationProvider(dialect).getMigrations()).sort();
      const older = place('older');
      const settings = {
        dataDir: older.PALISADE_DATA_DIR!,
        databaseUrl: older.PALISADE_DATABASE_URL ?? null,
        databaseSchema: older.PALISADE_DATABASE_SCHEMA ?? null,
      };
      await (await openDatabase(settings, { upTo: known.at(-2)! })).close();
      const key = { PALISADE_SECRET_KEY: 'ab'.repeat(32) };
      const file = join(root, 'older.backup');
      const made = await runConsoleCli({ ...older, ...key }, ['backup', file]);
      assert.equal(made.code, 0, made.out);
      assert.ok(made.out.includes(`(schema version ${known.at(-2)})`), made.out);
      const target = place('forward');
      const restored = await runConsoleCli({ ...target, ...key }, ['restore', file]);
      assert.equal(restored.code, 0, restored.out);
      let applied: string[];
      if (dialect === 'sqlite') {
        const db = new SQLite(join(target.PALISADE_DATA_DIR!, 'console.db'), { readonly: true });
        applied = db.prepare('SELECT name FROM kysely_migration ORDER BY name').pluck().all() as string[];
        db.close();
      } else {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        applied = (
          await client.query(`SELECT name FROM "${target.PALISADE_DATABASE_SCHEMA}".kysely_migration ORDER BY name`)
        ).rows.map((r) => r.name);
        await client.end();
      }
      assert.deepEqual(applied, known);
      // A backup never makes up a key: without the console's, it says so.
      const keyless = await runConsoleCli(older, ['backup', join(root, 'keyless.backup')]);
      assert.notEqual(keyless.code, 0);
      assert.match(keyless.out, /^palisade-console: no secret key: neither PALISADE_SECRET_KEY nor \S+secret\.key;/);
      assert.equal(existsSync(join(root, 'keyless.backup')), false);
    });
  });
}
