import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { LINK_PATH } from '@palisade/protocol/link';
import { eventually } from '@palisade/testkit';
import { WebSocket } from 'ws';
import { LIMITS } from '../src/plugins/rate-limits.js';
import { postgresRelayBus } from '../src/services/servers/relay-buses.js';
import { dialects, enrolledTestServer, registerUser, type TestApp, testApp } from './support.js';

/** An upgrade to the link endpoint: `open` (the socket, to close), or the refusal's status, headers and JSON. */
function upgrade(url: string, token: string, localAddress = '127.0.0.1', host?: string) {
  return new Promise<
    | { open: WebSocket }
    | { status: number; headers: Record<string, string | string[] | undefined>; body: { error: string } }
  >((resolve, reject) => {
    const ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${token}`, ...(host ? { host } : {}) },
      localAddress,
    });
    ws.once('open', () => resolve({ open: ws }));
    ws.once('unexpected-response', (_req, res) => {
      let text = '';
      res.on('data', (chunk: Buffer) => {
        text += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }));
    });
    ws.once('error', reject);
  });
}

/** The limits of `GET /api/agent/link` (routes/agent/link.ts), counted before Fastify's routes. */
for (const dialect of dialects()) {
  describe(`link upgrades are limited (${dialect})`, () => {
    let t: TestApp;
    let url = '';

    before(async () => {
      t = await testApp(dialect, { PALISADE_AGENT_TIMEOUT_MS: '500' });
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      url = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}${LINK_PATH}`;
    });
    after(() => t.close());

    test('one server opens its link at most 12 times a minute; the next is a 429 saying so', async () => {
      const { daemon, serverId } = await enrolledTestServer(t.app, await registerUser(t.app));
      await t.db.updateTable('servers').set({ connect: 'outbound' }).where('id', '=', serverId).execute();
      const { points } = LIMITS.link_server;
      for (let i = 0; i < points; i += 1) {
        const opened = await upgrade(url, daemon);
        assert.ok('open' in opened, JSON.stringify(opened));
        opened.open.terminate();
      }
      const refused = await upgrade(url, daemon);
      assert.ok(!('open' in refused));
      assert.equal(refused.status, 429);
      assert.match(
        refused.body.error,
        new RegExp(`^too many link upgrades for this server: at most ${points} a minute`),
      );
      assert.ok(Number(refused.headers['retry-after']) >= 1);
    });

    test('a name the operator did not choose is refused before anything else (421), as on every route', async () => {
      const { daemon } = await enrolledTestServer(t.app, await registerUser(t.app));
      const rebound = await upgrade(url, daemon, '127.0.0.1', 'rebound.attacker.example');
      assert.ok(!('open' in rebound));
      assert.equal(rebound.status, 421);
      assert.match(rebound.body.error, /^host: this console answers to /);
    });

    test('refused tokens count against their address too: past the limit it is a 429, not a 401', async () => {
      const { points } = LIMITS.link;
      // Another loopback address than the test before, so only these attempts count.
      const from = '127.0.0.9';
      const attempts = await Promise.all(Array.from({ length: points }, () => upgrade(url, 'dmn_not-a-token', from)));
      assert.ok(attempts.every((a) => !('open' in a) && a.status === 401));
      const next = await upgrade(url, 'dmn_not-a-token', from);
      assert.ok(!('open' in next));
      assert.equal(next.status, 429);
      assert.match(next.body.error, /^too many link upgrades with a refused token from this address/);
    });

    // PostgreSQL only: on SQLite one process serves, and there is nothing to relay.
    if (dialect === 'postgres')
      test('PostgreSQL LISTEN/NOTIFY carries relayed messages, long ones too, and names each link’s holder', async () => {
        const log = () => {};
        const settings = { databaseUrl: t.config.databaseUrl!, clock: () => t.clock.now };
        const a = postgresRelayBus(t.db, settings, log);
        const b = postgresRelayBus(t.db, settings, log);
        const got: string[] = [];
        a.listen('aaaa', (text) => got.push(text));
        b.listen('bbbb', () => {});
        try {
          // LISTEN starts in the background: sent until it is heard.
          await eventually('the first message heard', async () => {
            await b.send('aaaa', 'ping');
            return got.includes('ping') ? true : undefined;
          });
          const long = JSON.stringify({ body: 'x'.repeat(20_000) });
          await b.send('aaaa', long);
          await eventually('the long message heard', async () => (got.includes(long) ? true : undefined));
          const left = await t.db.selectFrom('link_relay_messages').select('id').execute();
          assert.deepEqual(left, [], 'a long message is removed as it is read');

          a.claim(77, 'aaaa');
          await eventually('claimed', async () => ((await b.holder(77)) === 'aaaa' ? true : undefined));
          b.claim(77, 'bbbb');
          await eventually('the newer claim wins', async () => ((await a.holder(77)) === 'bbbb' ? true : undefined));
          a.release(77, 'aaaa');
          b.renew('bbbb', [77]);
          await new Promise((resolve) => setTimeout(resolve, 200));
          assert.equal(await a.holder(77), 'bbbb', 'an older holder’s release leaves the newer one');
          b.release(77, 'bbbb');
          await eventually('released', async () => ((await a.holder(77)) === null ? true : undefined));
        } finally {
          await a.close();
          await b.close();
        }
      });
  });
}
