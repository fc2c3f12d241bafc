import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { dialects, insertTestServer, registerUser, type TestApp, type TestUser, testApp } from './support.js';

/** What the stand-in agent answers next: a real HTTP server on loopback playing a hostile agent. */
let answer: { status: number; type: string | null; body: string | Buffer } = { status: 200, type: null, body: '' };
/** The path and query the stand-in agent was last asked for, and the key it was asked with. */
let asked: string | null = null;
let askedKey: string | null = null;

const fakeAgent = http.createServer((req, res) => {
  asked = req.url ?? null;
  askedKey = req.headers.authorization ?? null;
  req.resume();
  req.on('end', () => {
    const headers: Record<string, string> = {};
    if (answer.type) headers['content-type'] = answer.type;
    res.writeHead(answer.status, headers).end(answer.body);
  });
});

for (const dialect of dialects()) {
  describe(`the console passes on only what an agent should answer (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    let serverId = 0;
    before(async () => {
      if (!fakeAgent.listening) await new Promise<void>((resolve) => fakeAgent.listen(0, '127.0.0.1', resolve));
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1' });
      user = await registerUser(t.app);
      const server = await insertTestServer(t.app, user, { name: 'edge-7' });
      serverId = server.id;
      await t.db
        .updateTable('servers')
        .set({
          api_url: `http://127.0.0.1:${(fakeAgent.address() as AddressInfo).port}`,
          api_key_enc: t.app.secrets.seal(`agk_${'k'.repeat(40)}`),
        })
        .where('id', '=', server.id)
        .execute();
    });
    after(async () => {
      await t.close();
      if (dialect === dialects().at(-1)) fakeAgent.close();
    });

    const get = (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie: user.cookie } });

    test('a control answer that is not JSON is a 502 naming the server, never served from the console', async () => {
      answer = { status: 200, type: 'text/html', body: '<script>alert(document.cookie)</script>' };
      for (const url of [`/api/servers/${serverId}/control?path=whitelist`, `/api/servers/${serverId}/metrics`]) {
        const res = await get(url);
        assert.equal(res.statusCode, 502, url);
        assert.match(String(res.headers['content-type']), /^application\/json/);
        assert.equal(res.json().error, 'the agent of server "edge-7" answered text/html, not JSON');
        assert.doesNotMatch(res.body, /<script>/);
      }
      answer = { status: 200, type: 'application/json', body: '{"entries": [1, 2' };
      assert.equal(
        (await get(`/api/servers/${serverId}/control?path=whitelist`)).json().error,
        'the agent of server "edge-7" answered invalid JSON',
      );
      answer = { status: 200, type: 'application/json; charset=utf-8', body: '{ "entries" : [ ] }' };
      const ok = await get(`/api/servers/${serverId}/control?path=whitelist`);
      assert.equal(ok.statusCode, 200);
      assert.equal(ok.body, '{"entries":[]}', 'parsed and written again by the console');
      answer = { status: 400, type: 'application/json', body: '{"error":"ip: expected an address"}' };
      const refused = await get(`/api/servers/${serverId}/control?path=whitelist`);
      assert.equal(refused.statusCode, 400);
      assert.deepEqual(refused.json(), { error: 'ip: expected an address' });
    });

    test('an agent 401, 403, 3xx or 5xx is a 502 naming the server, never the console’s own status', async () => {
      // A 401 from the console means "your session or token": the dashboard re-checks the sign-in and
      // the SDK exits as an auth failure. The agent's 401 means the stored agent key, so it must not leak.
      const cases: [number, string, string][] = [
        [401, '{"error":"invalid agent key"}', 'the agent of server "edge-7": the agent rejected the key'],
        [
          403,
          '{"error":"address 127.0.0.1 is not in metrics.whitelist"}',
          `the agent of server "edge-7": the agent refused the console's address`,
        ],
        [500, '{"error":"internal error"}', 'the agent of server "edge-7" failed: HTTP 500: internal error'],
        [302, '{}', 'the agent of server "edge-7" failed: HTTP 302'],
        [503, '<h1>down</h1>', 'the agent of server "edge-7" failed: HTTP 503'],
      ];
      for (const [status, body, message] of cases) {
        answer = { status, type: 'application/json', body };
        for (const method of ['GET', 'POST', 'DELETE'] as const) {
          const res = await t.app.inject({
            method,
            url: `/api/servers/${serverId}/control?path=whitelist`,
            headers: { cookie: user.cookie, ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
            ...(method === 'GET' ? {} : { payload: '{"ip":"192.0.2.1"}' }),
          });
          assert.equal(res.statusCode, 502, `${status} ${method}`);
          assert.ok(res.json().error.startsWith(message), `${status} ${method}: ${res.body}`);
          assert.doesNotMatch(res.body, /<h1>|127\.0\.0\.1:\d/);
        }
      }
    });

    test('an answer over the size limit is reported as too large, not as unreachable', async () => {
      answer = { status: 200, type: 'application/json', body: Buffer.alloc(5 * 1024 * 1024, 0x20) };
      const res = await get(`/api/servers/${serverId}/control?path=whitelist`);
      assert.equal(res.statusCode, 502);
      assert.equal(
        res.json().error,
        'the agent of server "edge-7" answered too much: the answer was larger than 4194304 bytes',
      );
      const section = await get(`/api/servers/${serverId}/section?name=attacks`);
      assert.equal(section.json().data.available, false);
      assert.match(section.json().data.error, /answered too much/);
    });

    test('the attacks section needs control.read, like the control proxy', async () => {
      answer = { status: 200, type: 'application/json', body: '{"attacks":[]}' };
      const allowed = await get(`/api/servers/${serverId}/section?name=attacks`);
      assert.equal(allowed.statusCode, 200);
      assert.deepEqual(allowed.json().data, { attacks: [], available: true });
      await t.app.services.accounts.setPermission(user.email, 'control.read', false);
      try {
        const refused = await get(`/api/servers/${serverId}/section?name=attacks`);
        assert.equal(refused.statusCode, 403);
        assert.equal(refused.json().error, 'this needs the control.read permission');
        assert.equal(refused.json().code, 'permission_required', 'the dashboard branches on the code, not the text');
        assert.equal((await get(`/api/servers/${serverId}/section?name=facts`)).statusCode, 200, 'other sections stay');
      } finally {
        await t.app.services.accounts.setPermission(user.email, 'control.read', true);
      }
    });

    const lookup = {
      ip: '198.51.100.7',
      verdict: 'drop',
      decided_by: 'feed',
      enforcement: { backend: 'monitor', reason: 'protection.backend = monitor' },
      on_both_lists: false,
      summary: 'Blocked: feed local lists 198.51.100.0/24.',
      holders: [
        { kind: 'feed', range: '198.51.100.0/24', feed: 'local', effect: 'drop', detail: 'feed local lists it' },
      ],
    };

    test('the lookup and feed-page queries reach the agent re-encoded, and only the parameters the contract knows', async () => {
      answer = { status: 200, type: 'application/json', body: JSON.stringify(lookup) };
      const base = `/api/servers/${serverId}/control?path=blacklist`;
      const ok = await get(`${base}&ip=198.51.100.7`);
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json(), lookup);
      assert.equal(asked, '/blacklist?ip=198.51.100.7');
      await get(`${base}&ip=2001:db8::1`);
      assert.equal(asked, '/blacklist?ip=2001%3Adb8%3A%3A1', 're-encoded, not the raw text');
      // An encoded "&" stays inside the value: it cannot add a parameter the contract does not know.
      await get(`${base}&ip=1.2.3.4%26source%3Dfeed%3Ax%0d%0aX-Evil:%201`);
      assert.equal(asked, '/blacklist?ip=1.2.3.4%26source%3Dfeed%3Ax%0D%0AX-Evil%3A+1');
      answer = {
        status: 200,
        type: 'application/json',
        body: JSON.stringify({
          feed: 'local',
          enabled: true,
          total: 3,
          entries: ['192.0.2.0/24'],
          next_cursor: '192.0.2.0/24',
        }),
      };
      const page = await get(`${base}&limit=1&source=feed:local&cursor=10.0.0.0`);
      assert.equal(page.statusCode, 200, page.body);
      assert.equal(asked, '/blacklist?limit=1&source=feed%3Alocal&cursor=10.0.0.0');

      asked = null;
      const refusals: [string, string][] = [
        [`${base}&ip=1.2.3.4&evil=1`, 'evil: not a parameter of GET blacklist (it takes ip, source, cursor, limit)'],
        [`${base}&ip=1.2.3.4&ip=5.6.7.8`, 'ip: given more than once; give it once'],
        [
          `/api/servers/${serverId}/control?path=whitelist&ip=1.2.3.4`,
          'ip: not a parameter of GET whitelist (it takes none)',
        ],
      ];
      for (const [url, error] of refusals) {
        const res = await get(url);
        assert.equal(res.statusCode, 400, url);
        assert.equal(res.json().error, error);
      }
      assert.equal(asked, null, 'a refused query never reaches the agent');
    });

    test("an agent's answer that is not what the contract says for that query is a 502 naming the server", async () => {
      const base = `/api/servers/${serverId}/control?path=blacklist`;
      // A list where a lookup is due (an agent from before the lookup ignores ?ip=): not passed on as one.
      answer = { status: 200, type: 'application/json', body: '{"entries":[]}' };
      const old = await get(`${base}&ip=198.51.100.7`);
      assert.equal(old.statusCode, 502);
      assert.match(
        old.json().error,
        /^the agent of server "edge-7" answered GET blacklist with something the control contract does not allow \(.+\); update the agent$/,
      );
      assert.equal((await get(base)).statusCode, 200, 'the same answer is right without ?ip=');
      answer = { status: 200, type: 'application/json', body: JSON.stringify({ ...lookup, verdict: 'maybe' }) };
      assert.match((await get(`${base}&ip=198.51.100.7`)).json().error, /verdict/);
      answer = { status: 400, type: 'application/json', body: '{"message":"no"}' };
      assert.equal((await get(`${base}&ip=x`)).statusCode, 502, 'a refusal is {error}');
    });

    test("/metrics passes on the agent's own bytes once they parsed as JSON, and written again when not UTF-8", async () => {
      // Asked of the service: the route's answers are held to the OpenAPI document, which these are not.
      const metrics = () => t.app.services.servers.metrics(user.id, serverId);
      answer = { status: 200, type: 'application/json', body: '{ "cpu" : 12.5,\n "big": 12345678901234567890 }' };
      const own = await metrics();
      assert.match(own.contentType, /^application\/json/);
      assert.equal(own.body.toString('utf8'), answer.body, 'the bytes that were parsed, unchanged');
      // A lone 0xFF is not UTF-8: the console serves the value it parsed (U+FFFD), as valid UTF-8.
      answer = { status: 200, type: 'application/json', body: Buffer.from('7b2261223a22ff227d', 'hex') };
      assert.equal((await metrics()).body.toString('hex'), Buffer.from('{"a":"\uFFFD"}').toString('hex'));
      answer = { status: 200, type: 'application/json', body: '{"cpu": 1' };
      await assert.rejects(metrics(), { message: 'the agent of server "edge-7" answered invalid JSON' });
      answer = { status: 200, type: 'text/html', body: '{}' };
      await assert.rejects(metrics(), { message: 'the agent of server "edge-7" answered text/html, not JSON' });
    });

    test('a new agent key is used from the next call on', async () => {
      // What an agent answers to /health too, which the key change asks first.
      answer = { status: 200, type: 'application/json', body: '{"status":"ok"}' };
      await t.app.services.servers.metrics(user.id, serverId);
      assert.equal(askedKey, `Bearer agk_${'k'.repeat(40)}`);
      const res = await t.app.inject({
        method: 'PATCH',
        url: `/api/servers/${serverId}`,
        headers: { cookie: user.cookie, 'content-type': 'application/json' },
        payload: { api_key: `agk_${'n'.repeat(40)}` },
      });
      assert.equal(res.statusCode, 200, res.body);
      await t.app.services.servers.metrics(user.id, serverId);
      assert.equal(askedKey, `Bearer agk_${'n'.repeat(40)}`);
    });

    test('history ranges are looked up as own keys only', async () => {
      for (const range of ['__proto__', 'toString', 'constructor', 'hasOwnProperty', 'valueOf']) {
        const res = await get(`/api/servers/${serverId}/section?name=history&range=${range}`);
        assert.equal(res.statusCode, 400, range);
        assert.deepEqual(res.json(), { error: 'range: expected 1h, 24h, 7d or 30d', code: 'invalid_input' });
      }
      assert.equal((await get(`/api/servers/${serverId}/section?name=history&range=7d`)).statusCode, 200);
    });
  });
}
