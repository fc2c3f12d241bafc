import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
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

const SPANS = { '1h': 3600_000, '24h': 86_400_000, '7d': 7 * 86_400_000, '30d': 30 * 86_400_000 } as const;

/** docs/dashboard.md, "Charts": each range is a fixed window ending now, answered with its bucket size. */
for (const dialect of dialects()) {
  describe(`the history window (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    before(async () => {
      t = await testApp(dialect);
      owner = await registerUser(t.app);
    });
    after(() => t.close());

    const enrolled = () => enrolledTestServer(t.app, owner);
    const checkin = (daemon: string, now: number, past: unknown[] = []) =>
      t.app.inject({
        method: 'POST',
        url: '/api/agent/checkin',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon}` },
        payload: JSON.stringify({
          agent_version: '0.1.0',
          hostname: 'web-1',
          facts: { os: 'Debian GNU/Linux 12', cores: 2 },
          sample: sampleAt(now, 50),
          ...(past.length > 0 ? { past_samples: past } : {}),
        }),
      });
    const history = async (serverId: number, range: string) => {
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/servers/${serverId}/section?name=history&range=${range}`,
        headers: { cookie: owner.cookie },
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data as {
        range: string;
        from: number;
        to: number;
        bucket_ms: number;
        samples: { ts: number; cpu_pct: number }[];
      };
    };

    test('one sample today: every range is its full window ending now, never beyond', async () => {
      const { serverId, daemon } = await enrolled();
      assert.equal((await checkin(daemon, t.clock.now)).statusCode, 200);
      const now = t.clock.now;
      for (const [range, span] of Object.entries(SPANS)) {
        const h = await history(serverId, range);
        assert.equal(h.range, range);
        assert.deepEqual([h.from, h.to], [now - span, now], `${range}: the window ends now and is ${span} ms long`);
        assert.equal(h.bucket_ms, Math.ceil(span / 360), `${range}: at most 360 buckets`);
        assert.equal(h.samples.length, 1, range);
        const [only] = h.samples;
        assert.equal(only!.ts, Math.floor(now / h.bucket_ms) * h.bucket_ms, `${range}: keyed by its bucket's start`);
        assert.equal(only!.cpu_pct, 50);
      }
    });

    test('an outage leaves its buckets out; samples before the window are not in it', async () => {
      const { serverId, daemon } = await enrolled();
      const now = t.clock.now;
      // Check-ins every 30 s for 5 minutes, a 20-minute silence, then 5 minutes again; one sample 2 h ago.
      const before = [now - 7200_000];
      for (let ts = now - 30 * 60_000; ts < now - 25 * 60_000; ts += 30_000) before.push(ts);
      const afterOutage: number[] = [];
      for (let ts = now - 5 * 60_000; ts < now; ts += 30_000) afterOutage.push(ts);
      const res = await checkin(
        daemon,
        now,
        [...before, ...afterOutage].map((ts) => sampleAt(ts, 20)),
      );
      assert.equal(res.statusCode, 200, res.body);

      const hour = await history(serverId, '1h');
      const times = hour.samples.map((s) => s.ts);
      assert.deepEqual(
        times,
        [...times].sort((a, b) => a - b),
        'in time order',
      );
      assert.ok(times.every((ts) => ts % hour.bucket_ms === 0 && ts >= hour.from - hour.bucket_ms && ts <= hour.to));
      assert.equal(hour.samples.length, 10 + 10 + 1, 'one bucket per 30 s sample, and the check-in now');
      assert.equal(
        times.filter((ts) => ts > now - 25 * 60_000 && ts < now - 5 * 60_000 - hour.bucket_ms).length,
        0,
        'nothing stands in for the silence',
      );
      assert.ok(!times.includes(now - 7200_000), 'two hours ago is outside the hour');
      const day = await history(serverId, '24h');
      assert.equal(day.samples[0]!.ts, Math.floor((now - 7200_000) / day.bucket_ms) * day.bucket_ms);
    });
  });
}
