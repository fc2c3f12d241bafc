import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MAX_PAST_SAMPLES } from '@palisade/protocol';
import {
  dialects,
  enrolledTestServer,
  registerUser,
  type TestApp,
  type TestUser,
  testApp,
  testSample,
} from './support.js';

const sampleAt = testSample;

const payload = (now: number, past?: unknown) => ({
  agent_version: '0.1.0',
  hostname: 'web-1',
  facts: { os: 'Debian GNU/Linux 12', cores: 2 },
  sample: sampleAt(now),
  ...(past !== undefined ? { past_samples: past } : {}),
});

for (const dialect of dialects()) {
  describe(`check-ins with samples from a console outage (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    before(async () => {
      t = await testApp(dialect);
      owner = await registerUser(t.app);
    });
    after(() => t.close());

    const enrolled = () => enrolledTestServer(t.app, owner);
    const checkin = (daemon: string, body: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/agent/checkin',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon}` },
        payload: JSON.stringify(body),
      });
    const stored = async (serverId: number) =>
      (
        await t.db
          .selectFrom('samples')
          .select(['ts', 'cpu_pct', 'extra'])
          .where('server_id', '=', serverId)
          .orderBy('ts')
          .execute()
      ).map((r) => ({ ts: Number(r.ts), cpu: r.cpu_pct, extra: JSON.parse(r.extra) }));

    test('past samples are stored at their own time, once; a check-in without them works as before', async () => {
      const { serverId, daemon } = await enrolled();
      const now = t.clock.now;
      assert.equal((await checkin(daemon, payload(now - 200_000))).statusCode, 200, 'an old agent: no past_samples');
      const past = [sampleAt(now - 150_000, 21), sampleAt(now - 120_000, 22), sampleAt(now - 90_000, 23)];
      const res = await checkin(daemon, payload(now, past));
      assert.equal(res.statusCode, 200, res.body);
      // Sent again (the answer to the first was lost): nothing is stored twice.
      t.clock.advance(5000);
      assert.equal((await checkin(daemon, payload(t.clock.now, past))).statusCode, 200);
      const rows = await stored(serverId);
      assert.deepEqual(
        rows.map((r) => r.ts),
        [now - 200_000, now - 150_000, now - 120_000, now - 90_000, now, now + 5000],
      );
      assert.deepEqual(
        rows.slice(1, 4).map((r) => r.cpu),
        [21, 22, 23],
      );
      assert.equal(rows[1]!.extra.disk_mount, '/');
      const server = await t.db.selectFrom('servers').selectAll().where('id', '=', serverId).executeTakeFirstOrThrow();
      assert.equal(JSON.parse(server.latest_sample!).ts, now + 5000, 'the latest sample stays the current one');
    });

    test('past samples in the future or older than raw retention are skipped, not stored', async () => {
      const { serverId, daemon } = await enrolled();
      const now = t.clock.now;
      const res = await checkin(
        daemon,
        payload(now, [sampleAt(now - 25 * 3600_000), sampleAt(now - 60_000), sampleAt(now + 3600_000)]),
      );
      assert.equal(res.statusCode, 200, res.body);
      assert.deepEqual(
        (await stored(serverId)).map((r) => r.ts),
        [now - 60_000, now],
      );
    });

    test('bad past samples answer 400 naming the field, and nothing is stored', async () => {
      const { serverId, daemon } = await enrolled();
      const now = t.clock.now;
      const cases: [unknown, RegExp][] = [
        [{ ...sampleAt(now - 1000), cpu_pct: 170 }, /^past_samples\.0\.cpu_pct: expected 0 to 100/],
        [{ ...sampleAt(now - 1000), ts: 'yesterday' }, /^past_samples\.0\.ts: /],
      ];
      for (const [bad, message] of cases) {
        const res = await checkin(daemon, payload(now, [bad]));
        assert.equal(res.statusCode, 400);
        assert.match(res.json().error, message);
      }
      const tooMany = Array.from({ length: MAX_PAST_SAMPLES + 1 }, (_, i) => sampleAt(now - 1000 * (i + 1)));
      const res = await checkin(daemon, payload(now, tooMany));
      assert.equal(res.statusCode, 400);
      assert.match(res.json().error, /^past_samples: at most 120 samples/);
      assert.equal((await checkin(daemon, payload(now, 'none'))).statusCode, 400);
      assert.deepEqual(await stored(serverId), []);
    });
  });
}
