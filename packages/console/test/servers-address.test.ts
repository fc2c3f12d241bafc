import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import { startConsoleProcess } from './console-process.js';
import {
  dialects,
  dropSchema,
  insertTestServer,
  registerUser,
  type TestApp,
  type TestUser,
  testApp,
} from './support.js';

/** Addresses that are not an agent's base URL; the hosts carry `leak-` so a log line holding one is found. */
const BAD_ADDRESSES = [
  'http://[::1',
  'http://leak-port.example:99999',
  'http://leak-zero.example:0',
  'http://',
  'ftp://leak-ftp.example',
  'http://user:pw@leak-user.example:9100',
  'http://leak-query.example:9100/?x=1',
  'https://leak-space.example :9100',
];

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
}

/** A loopback HTTP listener that records every request; it answers /health the way an agent does. */
async function listener(status = 200) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
    req.resume();
    res.writeHead(status, { 'content-type': 'application/json' }).end('{"status":"ok","version":"0.1.0"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

for (const dialect of dialects()) {
  describe(`server addresses and keys (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    before(async () => {
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1' });
      owner = await registerUser(t.app);
    });
    after(() => t.close());

    const dash = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: { cookie: owner.cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });

    async function serverAt(apiUrl: string, apiKey: string) {
      const server = await insertTestServer(t.app, owner, { hostname: null });
      await t.db
        .updateTable('servers')
        .set({ api_url: apiUrl, api_key_enc: t.app.secrets.seal(apiKey) })
        .where('id', '=', server.id)
        .execute();
      return server;
    }

    test('a new api_url needs the key again: the stored key never goes to the new address', async () => {
      const home = await listener();
      const other = await listener();
      try {
        const storedKey = generateToken('agentKey');
        const server = await serverAt(home.url, storedKey);
        const moved = await dash('PATCH', `/api/servers/${server.id}`, { api_url: other.url });
        assert.equal(moved.statusCode, 400, moved.body);
        assert.match(moved.json().error, /^api_key: /);
        assert.equal(other.seen.length, 0, 'the new address received no request');
        assert.equal(home.seen.length, 0);
        const row = await t.db.selectFrom('servers').selectAll().where('id', '=', server.id).executeTakeFirstOrThrow();
        assert.equal(row.api_url, home.url, 'nothing changed');

        const newKey = generateToken('agentKey');
        const both = await dash('PATCH', `/api/servers/${server.id}`, { api_url: other.url, api_key: newKey });
        assert.equal(both.statusCode, 200, both.body);
        assert.deepEqual(
          other.seen.map((s) => [s.method, s.url, s.authorization]),
          [['GET', '/health', `Bearer ${newKey}`]],
          'the check ran with the key given',
        );
        assert.ok(!other.seen.some((s) => s.authorization?.includes(storedKey)));
        const saved = await t.db
          .selectFrom('servers')
          .selectAll()
          .where('id', '=', server.id)
          .executeTakeFirstOrThrow();
        assert.equal(saved.api_url, other.url);
        assert.equal(t.app.secrets.open(saved.api_key_enc), newKey);

        // The same address again is not a change: no key needed.
        const same = await dash('PATCH', `/api/servers/${server.id}`, { api_url: other.url, name: 'renamed' });
        assert.equal(same.statusCode, 200, same.body);
      } finally {
        await home.close();
        await other.close();
      }
    });

    test('an unparsable agent address is 400 naming api_url on add and on test, never a 500', async () => {
      const product = (await t.app.services.catalog.products(owner.id))[0]!;
      const key = generateToken('agentKey');
      for (const apiUrl of BAD_ADDRESSES) {
        const added = await dash('POST', '/api/servers', {
          product_id: product.id,
          name: 'x',
          api_url: apiUrl,
          api_key: key,
        });
        assert.equal(added.statusCode, 400, `${apiUrl} → ${added.body}`);
        assert.match(
          added.json().error,
          /^api_url: expected an http or https URL with a host and an optional port 1-65535/,
        );
        const tested = await dash('POST', '/api/servers/test', { api_url: apiUrl, api_key: key });
        assert.equal(tested.statusCode, 400, `${apiUrl} → ${tested.body}`);
        assert.match(tested.json().error, /^api_url: expected an http or https URL/);
        const server = await serverAt('http://127.0.0.1:9', key);
        const patched = await dash('PATCH', `/api/servers/${server.id}`, { api_url: apiUrl, api_key: key });
        assert.equal(patched.statusCode, 400, `${apiUrl} → ${patched.body}`);
        assert.match(patched.json().error, /^api_url: expected an http or https URL/);
      }
    });

    test('before the first check-in, hostname is the server’s name, never the agent address', async () => {
      const server = await serverAt('http://leak-host.example:9100', generateToken('agentKey'));
      await t.db.updateTable('servers').set({ name: 'edge-7' }).where('id', '=', server.id).execute();
      const token = (
        await t.app.inject({
          method: 'POST',
          url: '/api/tokens',
          headers: { cookie: owner.cookie, 'content-type': 'application/json' },
          payload: JSON.stringify({ name: 'h' }),
        })
      ).json().data.token as string;
      const bearer = { authorization: `Bearer ${token}` };
      const answers = [
        await t.app.inject({ method: 'GET', url: '/api/v1/servers', headers: bearer }),
        await t.app.inject({ method: 'GET', url: `/api/v1/servers/${server.id}`, headers: bearer }),
        await dash('GET', '/api/servers'),
        await dash('GET', `/api/servers/${server.id}`),
        await dash('GET', `/api/servers/${server.id}/section?name=overview`),
      ];
      for (const res of answers) {
        assert.equal(res.statusCode, 200, res.body);
        assert.ok(!res.body.includes('leak-host'), `${res.body} shows the agent address`);
      }
      const listed = answers[0]!.json().data.servers.find((s: { id: number }) => s.id === server.id);
      assert.equal(listed.hostname, 'edge-7');
      assert.equal(answers[1]!.json().data.hostname, 'edge-7');
    });
  });
}

describe('the console log never holds an agent address', () => {
  for (const dialect of dialects()) {
    test(`bad, unreachable and refused addresses on add and test (${dialect})`, async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'palisade-addr-'));
      const schema = `a_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;
      const env: Record<string, string> = {
        PALISADE_DATA_DIR: dataDir,
        PALISADE_LOG_LEVEL: 'trace',
        PALISADE_ACCESS_LOG: '1', // the most the console writes: every request too
        PALISADE_BOOTSTRAP_ADMIN: '0',
        PALISADE_ALLOW_PRIVATE_TARGETS: '1',
        ...(dialect === 'postgres' && pgUrl ? { PALISADE_DATABASE_URL: pgUrl, PALISADE_DATABASE_SCHEMA: schema } : {}),
      };
      const running = await startConsoleProcess(env);
      const wrongKey = await listener(401);
      try {
        const send = (path: string, body: unknown, cookie = '') =>
          fetch(`${running.url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
            body: JSON.stringify(body),
          });
        const registered = await send('/api/auth/register', {
          email: `addr-${process.pid}@example.com`,
          password: 'address-password',
          name: 'A',
        });
        assert.equal(registered.status, 201);
        const cookie = registered.headers.get('set-cookie')!.split(';')[0]!;
        const product = (
          (await (await send('/api/products', { catalog_id: 1 }, cookie)).json()) as {
            data: { product: { id: number } };
          }
        ).data.product;
        const key = generateToken('agentKey');
        const unreachable = ['http://leak-dns.invalid:9100', 'http://169.254.169.254/leak-meta', wrongKey.url];
        for (const apiUrl of [...BAD_ADDRESSES, ...unreachable]) {
          const added = await send(
            '/api/servers',
            { product_id: product.id, name: 'x', api_url: apiUrl, api_key: key },
            cookie,
          );
          assert.equal(added.status, 400, apiUrl);
          assert.match(((await added.json()) as { error: string }).error, /^api_url: /);
          const tested = await send('/api/servers/test', { api_url: apiUrl, api_key: key }, cookie);
          assert.ok(tested.status === 400 || tested.status === 200, apiUrl);
        }
        const log = running.output();
        assert.match(log, /incoming request/, 'logging is on');
        for (const marker of ['leak-', '[::1', '169.254.169.254', wrongKey.url.replace('http://', ''), key]) {
          assert.ok(!log.includes(marker), `the log holds ${marker}:\n${log}`);
        }
      } finally {
        await wrongKey.close();
        await running.kill();
        if (dialect === 'postgres' && pgUrl) await dropSchema(pgUrl, schema);
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
