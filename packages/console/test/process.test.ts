import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { generateToken, hashToken } from '@palisade/protocol';
import { loadConfig } from '../src/config.js';
import { openDatabase } from '../src/db/database.js';
import type { Database } from '../src/db/schema.js';
import { preferredEncoding } from '../src/plugins/compression.js';
import { LIMITS } from '../src/plugins/rate-limits.js';
import { runConsoleCli, startConsoleProcess } from './console-process.js';
import { processEnv } from './observability-support.js';
import { dialects, testSample } from './support.js';

interface AccountAnswer {
  data: { account: { role: string }; permissions: string[] };
}
const answer = async (res: Response) => (await res.json()) as AccountAnswer;

/** The console database of `env`, opened beside a running console process for `work`. */
async function withDatabase<T>(env: Record<string, string>, work: (db: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase(loadConfig(env));
  try {
    return await work(database.db);
  } finally {
    await database.close();
  }
}

async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

for (const dialect of dialects()) {
  describe(`the console process (${dialect})`, () => {
    const { env, cleanup } = processEnv(dialect);
    after(cleanup);

    test('first start prints a one-time admin login; acknowledged writes survive SIGKILL', async () => {
      const first = await startConsoleProcess(env);
      const bootstrap = /Sign in as (\S+) with password (\S+)/.exec(first.output());
      assert.ok(bootstrap, first.output());
      const admin = await post(`${first.url}/api/auth/login`, { email: bootstrap[1], password: bootstrap[2] });
      assert.equal(admin.status, 200);
      assert.equal((await answer(admin)).data.account.role, 'admin');

      const registered = await post(`${first.url}/api/auth/register`, {
        email: 'durable@example.com',
        password: 'survives-a-crash',
        name: 'D',
      });
      assert.equal(registered.status, 201);
      await first.kill('SIGKILL');

      const second = await startConsoleProcess(env);
      try {
        assert.doesNotMatch(second.output(), /Sign in as/, 'the bootstrap line is printed once');
        const login = await post(`${second.url}/api/auth/login`, {
          email: 'durable@example.com',
          password: 'survives-a-crash',
        });
        assert.equal(login.status, 200);
      } finally {
        await second.kill();
      }
    });

    test('check-ins acknowledged before a SIGKILL are all in the database after restart', async () => {
      const first = await startConsoleProcess({ ...env, PALISADE_BOOTSTRAP_ADMIN: '0' });
      let killed = false;
      try {
        const reg = await post(`${first.url}/api/auth/register`, {
          email: 'checkins@example.com',
          password: 'group-commit-durable',
          name: 'C',
        });
        assert.equal(reg.status, 201);
        const cookie = reg.headers.get('set-cookie')!.split(';')[0]!;
        const added = await post(`${first.url}/api/products`, { catalog_id: 3 }, { cookie });
        assert.equal(added.status, 201);
        const productId = ((await added.json()) as { data: { product: { id: number } } }).data.product.id;
        const me = (await (await fetch(`${first.url}/api/account/me`, { headers: { cookie } })).json()) as {
          data: { id: number };
        };
        const accountId = me.data.id;
        // Servers with daemon tokens, written beside the running console (as enrolment would).
        const daemons = await withDatabase(env, async (db) => {
          const tokens: { id: number; token: string }[] = [];
          for (let i = 0; i < 20; i += 1) {
            const token = generateToken('daemon');
            const row = await db
              .insertInto('servers')
              .values({
                account_id: accountId,
                product_id: productId,
                name: `durable-${i}`,
                api_url: 'http://10.0.0.5:9100',
                api_key_enc: 'not-a-real-key',
                facts: '{}',
                daemon_token_hash: hashToken(token),
                created_at: Date.now(),
              })
              .returning('id')
              .executeTakeFirstOrThrow();
            tokens.push({ id: Number(row.id), token });
          }
          return tokens;
        });

        // 32 check-ins in flight at all times, each with its own sample time; SIGKILL once 300 are acknowledged.
        const acknowledged: { serverId: number; ts: number }[] = [];
        const start = Date.now();
        let n = 0;
        const checkIn = async () => {
          while (!killed) {
            const i = n++;
            const server = daemons[i % daemons.length]!;
            const ts = start - i; // unique per check-in, well within the accepted clock skew
            const res = await post(
              `${first.url}/api/agent/checkin`,
              {
                agent_version: '0.1.0',
                hostname: `durable-${server.id}`,
                facts: { cores: 2 },
                sample: testSample(ts),
              },
              { authorization: `Bearer ${server.token}` },
            ).catch(() => null);
            if (res?.ok) acknowledged.push({ serverId: server.id, ts });
            await res?.arrayBuffer();
            if (acknowledged.length >= 300 && !killed) {
              killed = true;
              await first.kill('SIGKILL');
            }
          }
        };
        await Promise.all(Array.from({ length: 32 }, checkIn));
        assert.ok(acknowledged.length >= 300);

        const second = await startConsoleProcess({ ...env, PALISADE_BOOTSTRAP_ADMIN: '0' });
        try {
          const stored = await withDatabase(env, async (db) =>
            db
              .selectFrom('samples')
              .select(['server_id', 'ts'])
              .where('resolution', '=', 'raw')
              .where(
                'server_id',
                'in',
                daemons.map((d) => d.id),
              )
              .execute(),
          );
          const keys = new Set(stored.map((r) => `${Number(r.server_id)}:${Number(r.ts)}`));
          const lost = acknowledged.filter((a) => !keys.has(`${a.serverId}:${a.ts}`));
          assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged check-ins were lost`);
        } finally {
          await second.kill();
        }
      } finally {
        if (!killed) await first.kill();
      }
    });

    test('admin commands create admins, disable, enable, grant and revoke', async () => {
      const created = await runConsoleCli(env, [
        'admin',
        'create-admin',
        '--email',
        'ops@example.com',
        '--name',
        'Ops',
      ]);
      assert.equal(created.code, 0, created.out);
      const password = /Password \(shown once\): (\S+)/.exec(created.out)?.[1];
      assert.ok(password);
      const fromStdin = await runConsoleCli(
        env,
        ['admin', 'create-admin', '--email', 'ops2@example.com', '--password-stdin'],
        'typed-by-hand\n',
      );
      assert.equal(fromStdin.code, 0, fromStdin.out);
      assert.doesNotMatch(fromStdin.out, /typed-by-hand/);

      const running = await startConsoleProcess(env);
      try {
        const login = async (email: string, pw: string) =>
          post(`${running.url}/api/auth/login`, { email, password: pw });
        const ok = await login('ops@example.com', password);
        assert.equal(ok.status, 200);
        assert.equal((await answer(ok)).data.account.role, 'admin');
        assert.equal((await login('ops2@example.com', 'typed-by-hand')).status, 200);
        const cookie = (await login('ops@example.com', password)).headers.get('set-cookie')!.split(';')[0]!;

        const revoked = await runConsoleCli(env, ['admin', 'revoke', 'ops@example.com', 'control.edit']);
        assert.equal(revoked.code, 0, revoked.out);
        const me = await answer(await fetch(`${running.url}/api/account/me`, { headers: { cookie } }));
        assert.deepEqual(me.data.permissions, ['control.read']);
        assert.equal((await runConsoleCli(env, ['admin', 'grant', 'ops@example.com', 'control.edit'])).code, 0);
        const again = await answer(await fetch(`${running.url}/api/account/me`, { headers: { cookie } }));
        assert.deepEqual([...again.data.permissions].sort(), ['control.edit', 'control.read']);

        assert.equal((await runConsoleCli(env, ['admin', 'disable', 'ops@example.com'])).code, 0);
        assert.equal(
          (await fetch(`${running.url}/api/account/me`, { headers: { cookie } })).status,
          401,
          'sessions end at once',
        );
        assert.equal((await login('ops@example.com', password)).status, 401);
        assert.equal((await runConsoleCli(env, ['admin', 'enable', 'ops@example.com'])).code, 0);
        assert.equal((await login('ops@example.com', password)).status, 200);
      } finally {
        await running.kill();
      }

      const unknown = await runConsoleCli(env, ['admin', 'disable', 'nobody@example.com']);
      assert.equal(unknown.code, 1);
      assert.match(unknown.out, /account nobody@example.com not found/);
      const badPermission = await runConsoleCli(env, ['admin', 'grant', 'ops@example.com', 'root']);
      assert.notEqual(badPermission.code, 0);
      assert.match(badPermission.out, /expected one of control.read, control.edit/);
      const duplicate = await runConsoleCli(env, ['admin', 'create-admin', '--email', 'ops@example.com']);
      assert.equal(duplicate.code, 1);
      assert.match(duplicate.out, /already exists/);
    });
  });
}

describe('start-up errors', () => {
  test('a bad setting stops the process with a message naming the variable', async () => {
    const res = await runConsoleCli({ PALISADE_PORT: 'eighty' }, []);
    assert.equal(res.code, 1);
    assert.match(res.out, /PALISADE_PORT/);
    assert.doesNotMatch(res.out, /at .*\.js:\d+/, 'no stack trace');
  });

  test('PALISADE_TRUST_PROXY=abc stops the process with a message naming the variable and what it expects', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'palisade-trust-'));
    try {
      for (const value of ['abc', '10.0.0.1/33', '2']) {
        const res = await runConsoleCli({ PALISADE_TRUST_PROXY: value, PALISADE_DATA_DIR: dataDir }, []);
        assert.equal(res.code, 1, value);
        assert.match(res.out, /^palisade-console: bad setting PALISADE_TRUST_PROXY: /m, value);
        assert.match(res.out, /expected/, value);
        if (value === 'abc')
          assert.match(res.out, /"abc" is not an IP address or CIDR; expected true, false, or a comma-separated list/);
        assert.doesNotMatch(res.out, /invalid IP address|at .*\.js:\d+/, value);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('palisade-console --version and -V print the package version and exit 0', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    for (const flag of ['--version', '-V']) {
      const res = await runConsoleCli({ PALISADE_PORT: 'eighty' }, [flag]);
      assert.equal(res.code, 0, `${flag}: ${res.out}`);
      assert.equal(res.out.trim(), version, flag);
    }
  });

  test('a port in use says so and what to do', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const dataDir = mkdtempSync(join(tmpdir(), 'palisade-port-'));
    try {
      const res = await runConsoleCli({ PALISADE_PORT: String(port), PALISADE_DATA_DIR: dataDir }, []);
      assert.equal(res.code, 1);
      assert.match(res.out, /EADDRINUSE/);
      assert.match(res.out, /set PALISADE_PORT to a free one/);
    } finally {
      blocker.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('the dashboard', () => {
  test('the console serves the built dashboard with its security headers', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'palisade-web-'));
    const running = await startConsoleProcess({ PALISADE_DATA_DIR: dir });
    try {
      const res = await fetch(`${running.url}/dashboard/settings/api`);
      assert.equal(res.status, 200, 'packages/web/dist is found (run `npm run build` first)');
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'; script-src 'self'/);
      // Run directly, private targets stay off, and the start-up output does not claim otherwise.
      assert.doesNotMatch(running.output(), /Private agent targets are allowed/);
      assert.match(running.output(), /PALISADE_PUBLIC_URL is not set/);
      const html = await res.text();
      const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
      assert.ok(asset, 'index.html names its script');
      const js = await fetch(`${running.url}${asset}`);
      assert.equal(js.status, 200);
      assert.match(js.headers.get('cache-control') ?? '', /immutable/);
      assert.equal((await fetch(`${running.url}/assets/..%2F..%2Fpackage.json`)).status, 404);
      assert.equal((await fetch(`${running.url}/`, { redirect: 'manual' })).headers.get('location'), '/dashboard');
    } finally {
      await running.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A raw GET (no client decoding): status, headers and the bytes as sent. */
function rawGet(url: string, headers: Record<string, string> = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      })
      .on('error', reject);
  });
}

describe('compression', () => {
  test('Accept-Encoding: brotli first, then gzip; q=0 refuses one; * takes any', () => {
    assert.equal(preferredEncoding(undefined), null);
    assert.equal(preferredEncoding('gzip, deflate, br'), 'br');
    assert.equal(preferredEncoding('gzip'), 'gzip');
    assert.equal(preferredEncoding('br;q=0, gzip;q=0.5'), 'gzip');
    assert.equal(preferredEncoding('identity'), null);
    assert.equal(preferredEncoding('*'), 'br');
    assert.equal(preferredEncoding('*;q=0, gzip'), 'gzip');
    assert.equal(preferredEncoding('BR'), 'br');
  });

  test('the bundle goes out precompressed, a large JSON answer compressed, small ones and the source map not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'palisade-web-'));
    const running = await startConsoleProcess({ PALISADE_DATA_DIR: dir });
    try {
      const html = (await rawGet(`${running.url}/dashboard`)).body.toString();
      const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
      const plain = await rawGet(`${running.url}${asset}`);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.equal(plain.headers.vary, 'accept-encoding');
      const br = await rawGet(`${running.url}${asset}`, { 'accept-encoding': 'gzip, deflate, br' });
      assert.equal(br.headers['content-encoding'], 'br');
      assert.ok(brotliDecompressSync(br.body).equals(plain.body), 'brotli of the very bundle');
      const gz = await rawGet(`${running.url}${asset}`, { 'accept-encoding': 'gzip' });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.ok(gunzipSync(gz.body).equals(plain.body));
      console.log(
        `dashboard bundle: ${plain.body.length} B plain, ${gz.body.length} B gzip, ${br.body.length} B brotli`,
      );
      // The precompressed files are not addresses of their own, and the source map is private.
      assert.equal((await rawGet(`${running.url}${asset}.br`)).status, 404);
      assert.equal((await rawGet(`${running.url}${asset}.map`)).status, 404);
      assert.doesNotMatch(plain.body.toString(), /sourceMappingURL/);

      // JSON: the OpenAPI document is large, /healthz small.
      const doc = await rawGet(`${running.url}/api/v1/openapi.json`, { 'accept-encoding': 'br' });
      assert.equal(doc.status, 200);
      assert.equal(doc.headers['content-encoding'], 'br');
      const parsed = JSON.parse(brotliDecompressSync(doc.body).toString());
      assert.equal(typeof parsed.openapi, 'string');
      const gzDoc = await rawGet(`${running.url}/api/v1/openapi.json`, { 'accept-encoding': 'gzip' });
      assert.equal(gzDoc.headers['content-encoding'], 'gzip');
      assert.deepEqual(JSON.parse(gunzipSync(gzDoc.body).toString()), parsed);
      const plainDoc = await rawGet(`${running.url}/api/v1/openapi.json`);
      assert.equal(plainDoc.headers['content-encoding'], undefined);
      assert.deepEqual(JSON.parse(plainDoc.body.toString()), parsed);
      const small = await rawGet(`${running.url}/healthz`, { 'accept-encoding': 'br' });
      assert.equal(small.headers['content-encoding'], undefined, 'under 1 KB: sent as it is');
    } finally {
      await running.kill();
      rmSync(dir, { recursive: true, force: true });
    }
    // Configured, the source map is served.
    const mapsDir = mkdtempSync(join(tmpdir(), 'palisade-web-'));
    const withMaps = await startConsoleProcess({ PALISADE_DATA_DIR: mapsDir, PALISADE_WEB_SOURCE_MAPS: '1' });
    try {
      const html = (await rawGet(`${withMaps.url}/dashboard`)).body.toString();
      const asset = /src="(\/assets\/[^"]+\.js)"/.exec(html)![1]!;
      const map = await rawGet(`${withMaps.url}${asset}.map`);
      assert.equal(map.status, 200);
      assert.equal(JSON.parse(map.body.toString()).version, 3);
    } finally {
      await withMaps.kill();
      rmSync(mapsDir, { recursive: true, force: true });
    }
  });
});

/** The `VAR=value` settings the root package.json's `start` script puts in front of the console. */
function npmStartEnv(): Record<string, string> {
  // This file runs compiled, from packages/console/dist/test/.
  const rootPackage = fileURLToPath(new URL('../../../../package.json', import.meta.url));
  const start: string = JSON.parse(readFileSync(rootPackage, 'utf8')).scripts.start;
  const command = start.slice(start.lastIndexOf('&&') + 2);
  return Object.fromEntries([...command.matchAll(/(?:^|\s)([A-Z][A-Z0-9_]*)=(\S+)/g)].map((m) => [m[1]!, m[2]!]));
}

describe('the npm start configuration', () => {
  test('says at start-up that private agent targets are allowed, and how to turn that off', async () => {
    const settings = npmStartEnv();
    assert.equal(settings.PALISADE_ALLOW_PRIVATE_TARGETS, '1', 'npm start keeps the quickstart (agents on loopback)');
    const dir = mkdtempSync(join(tmpdir(), 'palisade-npmstart-'));
    const running = await startConsoleProcess({ ...settings, PALISADE_DATA_DIR: dir });
    try {
      assert.match(
        running.output(),
        /Private agent targets are allowed .*Unset it on a console that faces the internet/,
        running.output(),
      );
    } finally {
      await running.kill();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the notification outbox across a crash', () => {
  test('notifications queued while the receiver is down are all delivered after a SIGKILL and restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'palisade-outbox-'));
    const env = { PALISADE_DATA_DIR: dir, PALISADE_ALLOW_PRIVATE_TARGETS: '1', PALISADE_BOOTSTRAP_ADMIN: '0' };
    // A port that nothing listens on yet; the receiver comes up there later.
    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));

    const first = await startConsoleProcess(env);
    assert.match(first.output(), /Private agent targets are allowed .*Unset it on a console that faces the internet/);
    const send = (base: string, path: string, body: unknown, cookie?: string) =>
      fetch(`${base}${path}`, {
        method: path === '/api/account/webhook' ? 'PUT' : 'POST',
        headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify(body),
      });
    const reg = await send(first.url, '/api/auth/register', {
      email: 'outbox@example.com',
      password: 'outbox-password',
      name: 'O',
    });
    const cookie = reg.headers.get('set-cookie')!.split(';')[0]!;
    const product = (
      (await (await send(first.url, '/api/products', { catalog_id: 1 }, cookie)).json()) as {
        data: { product: { id: number } };
      }
    ).data.product;
    assert.equal(
      (await send(first.url, '/api/account/webhook', { url: `http://127.0.0.1:${port}/hook` }, cookie)).status,
      200,
    );
    for (let i = 0; i < 3; i += 1) {
      assert.equal(
        (await send(first.url, '/api/tickets', { product_id: product.id, subject: `crash ${i}`, message: 'm' }, cookie))
          .status,
        201,
      );
    }
    await first.kill('SIGKILL');

    const deliveries = new Map<string, string>();
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => {
        body += d;
      });
      req.on('end', () => {
        deliveries.set(String(req.headers['x-palisade-delivery']), body);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(port, '127.0.0.1', resolve));
    const second = await startConsoleProcess(env);
    try {
      const deadline = Date.now() + 90_000;
      while (deliveries.size < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      assert.equal(deliveries.size, 3, 'every queued notification arrives (de-duplicated by X-Palisade-Delivery)');
      const subjects = [...deliveries.values()].map((b) => JSON.parse(b).title as string).sort();
      assert.ok(subjects.every((s) => s.startsWith('Ticket T-')));
    } finally {
      await second.kill();
      await new Promise((resolve) => receiver.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * A link upgrade (routes/agent/link.ts) from `from`, optionally through a proxy's X-Forwarded-For:
 * the refusal's status and error (an unknown token, so each counts against the client's address).
 */
function refusedUpgrade(url: string, from: string, forwardedFor?: string): Promise<{ status: number; error: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/api/agent/link`, {
      localAddress: from,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        authorization: 'Bearer dmn_not-a-token',
        ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      reject(new Error('an unknown token was upgraded'));
    });
    req.on('response', (res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, error: JSON.parse(text).error }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** Sends `count` refused upgrades in batches and returns how many statuses of each kind came back. */
async function refusals(count: number, send: (i: number) => Promise<{ status: number }>) {
  const statuses = new Map<number, number>();
  for (let sent = 0; sent < count; sent += 50) {
    const batch = await Promise.all(Array.from({ length: Math.min(50, count - sent) }, (_, i) => send(sent + i)));
    for (const { status } of batch) statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  return Object.fromEntries(statuses);
}

for (const dialect of dialects()) {
  describe(`the link endpoint behind a trusted proxy (${dialect})`, () => {
    const { env, cleanup } = processEnv(dialect);
    after(cleanup);

    // 127.0.0.1 is the proxy; uniquelocal (10/8, 172.16/12, 192.168/16, fc00::/7) is a named range only
    // Fastify's own proxy handling knows. Any other loopback address is a client reaching the console directly.
    test('refused link upgrades count per forwarded client behind a trusted proxy; an untrusted X-Forwarded-For is ignored', async () => {
      const proc = await startConsoleProcess({ ...env, PALISADE_TRUST_PROXY: '127.0.0.1, uniquelocal' });
      try {
        const { points } = LIMITS.link;
        const limited = /^too many link upgrades with a refused token from this address/;
        // Through the proxy and an inner proxy (10.1.1.1, trusted as uniquelocal): every refusal counts against
        // the nearest untrusted hop, the client 198.51.100.7, never against a proxy; another client is not limited.
        assert.deepEqual(
          await refusals(points, () => refusedUpgrade(proc.url, '127.0.0.1', '198.51.100.7, 10.1.1.1')),
          { 401: points },
        );
        const past = await refusedUpgrade(proc.url, '127.0.0.1', '198.51.100.7, 10.1.1.1');
        assert.equal(past.status, 429);
        assert.match(past.error, limited);
        assert.equal((await refusedUpgrade(proc.url, '127.0.0.1', '10.1.1.1, 198.51.100.8')).status, 401);
        assert.equal((await refusedUpgrade(proc.url, '127.0.0.1', '198.51.100.7, 10.1.1.1, 10.2.2.2')).status, 429);
        // Straight from an address that is not a proxy: its X-Forwarded-For, different every time, is ignored.
        assert.deepEqual(
          await refusals(points, (i) => refusedUpgrade(proc.url, '127.0.0.28', `203.0.113.${i % 250}`)),
          { 401: points },
        );
        const direct = await refusedUpgrade(proc.url, '127.0.0.28', '203.0.113.251');
        assert.equal(direct.status, 429);
        assert.match(direct.error, limited);
      } finally {
        await proc.kill();
      }
    });
  });
}
