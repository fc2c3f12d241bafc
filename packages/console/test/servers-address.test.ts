import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateToken } from '@palisade/protocol';
import { dialects, insertTestServer, registerUser, type TestApp, type TestUser, testApp } from './support.js';

interface Seen {
  method: string;
  url: string;
  authorization: string | undefined;
}

/** A loopback HTTP listener that records every request; it answers /health the way an agent does. */
async function listener() {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization });
    req.resume();
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","version":"0.1.0"}');
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
  });
}
