import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateToken, hashToken } from '@palisade/protocol';
import { TREND_BUCKET_MS } from '../src/services/servers/trends.js';
import { dialects, insertTestServer, registerUser, type TestApp, type TestUser, testApp } from './support.js';

// Tags and the fleet table's trends (docs/fleet.md, "Tags" and "Fleet trends").

for (const dialect of dialects()) {
  describe(`server tags and fleet trends (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    let other: TestUser;
    before(async () => {
      t = await testApp(dialect);
      user = await registerUser(t.app);
      other = await registerUser(t.app);
    });
    after(() => t.close());

    const as = (u: TestUser) => ({
      get: (url: string) => t.app.inject({ method: 'GET', url, headers: { cookie: u.cookie } }),
      patch: (url: string, body: unknown) =>
        t.app.inject({
          method: 'PATCH',
          url,
          headers: { cookie: u.cookie, 'content-type': 'application/json' },
          payload: JSON.stringify(body),
        }),
    });

    test('tags are set with the name, cleaned, listed, filtered by, and checked', async () => {
      const web = await insertTestServer(t.app, user, { name: 'web-1' });
      const db = await insertTestServer(t.app, user, { name: 'db-1' });
      const me = as(user);
      const renamed = await me.patch(`/api/servers/${web.id}`, { name: 'web-eu-1', tags: [' Web', 'eu-west', 'web'] });
      assert.equal(renamed.statusCode, 200, renamed.body);
      assert.equal(renamed.json().data.server.label, 'web-eu-1');
      assert.deepEqual(renamed.json().data.server.tags, ['web', 'eu-west'], 'trimmed, lowercased, each once');
      assert.equal((await me.patch(`/api/servers/${db.id}`, { tags: ['db', 'eu-west'] })).statusCode, 200);

      const all = (await me.get('/api/servers')).json().data;
      assert.deepEqual(
        all.servers.map((s: { label: string; tags: string[] }) => [s.label, s.tags]),
        [
          ['web-eu-1', ['web', 'eu-west']],
          ['db-1', ['db', 'eu-west']],
        ],
      );
      const eu = (await me.get('/api/servers?tag=eu-west')).json().data;
      assert.equal(eu.servers.length, 2);
      const onlyDb = (await me.get('/api/servers?tag=db')).json().data;
      assert.deepEqual(
        onlyDb.servers.map((s: { label: string }) => s.label),
        ['db-1'],
      );
      assert.equal(onlyDb.counts.offline, 1, 'counts follow the filter');
      assert.equal((await me.get('/api/servers?tag=nothing')).json().data.servers.length, 0);
      assert.equal((await as(other).get('/api/servers?tag=db')).json().data.servers.length, 0, 'only own servers');

      const bad = await me.get('/api/servers?tag=Not%20a%20tag');
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().error, /^tag: expected 1 to 32 of a-z/);
      const badTag = await me.patch(`/api/servers/${web.id}`, { tags: ['ok', 'has space'] });
      assert.equal(badTag.statusCode, 400);
      assert.match(badTag.json().error, /^tags\.1: expected 1 to 32 of a-z/);
      const tooMany = await me.patch(`/api/servers/${web.id}`, { tags: Array.from({ length: 11 }, (_, i) => `t${i}`) });
      assert.equal(tooMany.statusCode, 400);
      assert.match(tooMany.json().error, /^tags: at most 10 tags/);
      assert.equal((await as(other).patch(`/api/servers/${web.id}`, { tags: ['x'] })).statusCode, 404);
      const kept = (await me.get(`/api/servers/${web.id}`)).json().data.server;
      assert.deepEqual(kept.tags, ['web', 'eu-west'], 'a refused change stores nothing');
      const v1 = await t.app.inject({ method: 'GET', url: `/api/servers/${web.id}`, headers: { cookie: user.cookie } });
      assert.equal(v1.statusCode, 200);
    });

    test('a stored agent key that cannot be opened is a 502 that says what to do, not a 500', async () => {
      const server = await insertTestServer(t.app, user, { name: 'unsealed-1' });
      for (const url of [`/api/servers/${server.id}/metrics`, `/api/servers/${server.id}/control?path=whitelist`]) {
        const res = await as(user).get(url);
        assert.equal(res.statusCode, 502, url);
        assert.match(res.json().error, /the stored key for the agent of server "unsealed-1" cannot be read/);
        assert.match(res.json().error, /save the agent key again under Agent key$/);
      }
    });

    test('trends: figures now from the newest check-in and last-hour CPU in 5-minute buckets, gaps as null', async () => {
      const server = await insertTestServer(t.app, user, { name: 'trend-1' });
      const daemon = generateToken('daemon');
      await t.db
        .updateTable('servers')
        .set({ daemon_token_hash: hashToken(daemon) })
        .where('id', '=', server.id)
        .execute();
      const checkin = (cpu: number) =>
        t.app.inject({
          method: 'POST',
          url: '/api/agent/checkin',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon}` },
          payload: {
            agent_version: '0.1.0',
            hostname: 'trend-1',
            facts: { cores: 2 },
            sample: {
              ts: t.clock.now,
              cpu_pct: cpu,
              mem_used_mb: 1000,
              mem_total_mb: 8000,
              disk_used_pct: 40.04,
              load1: 0.2,
              rx_bps: 1000,
              tx_bps: 250,
            },
          },
        });
      // Start at a bucket boundary: 10 then 30 in the first bucket, nothing for 20 minutes, then 50.
      t.clock.advance(TREND_BUCKET_MS - (t.clock.now % TREND_BUCKET_MS));
      assert.equal((await checkin(10)).statusCode, 200);
      t.clock.advance(60_000);
      assert.equal((await checkin(30)).statusCode, 200);
      t.clock.advance(25 * 60_000);
      assert.equal((await checkin(50)).statusCode, 200);

      const res = await as(user).get('/api/fleet/trends');
      assert.equal(res.statusCode, 200, res.body);
      const trends = res.json().data;
      assert.equal(trends.bucket_ms, TREND_BUCKET_MS);
      assert.equal(trends.window_ms, 3600_000);
      const mine = trends.servers.find((s: { id: number }) => s.id === server.id);
      assert.deepEqual(mine.now, {
        at: t.clock.now,
        cpu_pct: 50,
        mem_pct: 12.5,
        disk_pct: 40,
        net_bits_per_s: 10_000,
      });
      assert.equal(mine.cpu.length, 12);
      assert.deepEqual(mine.cpu.slice(-6), [20, null, null, null, null, 50], 'the average, then a gap, then now');
      assert.ok(
        mine.cpu.slice(0, 6).every((v: number | null) => v === null),
        'nothing before the first check-in',
      );
      const never = trends.servers.find((s: { now: unknown }) => s.now === null);
      assert.ok(never, 'a server that never checked in has no figures');
      assert.ok(never.cpu.every((v: number | null) => v === null));
      const theirs = (await as(other).get('/api/fleet/trends')).json().data;
      assert.equal(
        theirs.servers.some((s: { id: number }) => s.id === server.id),
        false,
      );
    });
  });
}
