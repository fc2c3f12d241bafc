import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { openDatabase } from '../src/db/database.js';
import { createRateLimits, type LimitVerdict } from '../src/plugins/rate-limits.js';
import { createToken, registerUser, testDatabase } from './support.js';
import { twoProcesses } from './two-processes.js';

// The shared rate limits count in batches (plugins/rate-limits.ts): the attempts arriving together
// are counted in one round trip, yet each gets a count of its own, so the limit stays exact
// across processes.

const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;
const redisUrl = process.env.PALISADE_TEST_REDIS_URL;
if (process.env.CI && (!pgUrl || !redisUrl)) {
  throw new Error(
    'CI: PALISADE_TEST_DATABASE_URL and PALISADE_TEST_REDIS_URL must be set; this suite would be skipped',
  );
}

/** The counts the verdicts were given, from their `remaining`: 120 − remaining, for those allowed. */
function allowedCounts(verdicts: LimitVerdict[]) {
  return verdicts
    .filter((v) => v.allowed)
    .map((v) => v.limit - v.remaining)
    .sort((a, b) => a - b);
}

const oneTo = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('shared rate limits counted in batches', { skip: !pgUrl }, () => {
  const stores: Array<'database' | 'redis'> = redisUrl ? ['database', 'redis'] : ['database'];
  for (const store of stores) {
    test(`two processes, 200 attempts at once on one token and 50 on others: exactly the limit each, in few batches (${store})`, async () => {
      const database = await testDatabase('postgres');
      const config = { dataDir: database.dataDir, databaseUrl: pgUrl!, databaseSchema: database.databaseSchema };
      const second = await openDatabase(config);
      const prefix = `palisade-test-rl-${process.pid}-${Date.now()}`;
      const redis = store === 'redis' ? [new Redis(redisUrl!), new Redis(redisUrl!)] : [];
      try {
        const limiters = [database.db, second.db].map((db, i) =>
          createRateLimits({ redis: redis[i] ?? null, db, clock: Date.now, prefix }),
        );
        // Interleaved: the token's attempts alternate between the processes, other windows between them.
        const attempts: Array<Promise<LimitVerdict>> = [];
        const others: Array<Promise<LimitVerdict>> = [];
        for (let i = 0; i < 200; i += 1) {
          attempts.push(limiters[i % 2]!.consume('token', 'busy'));
          if (i % 4 === 0) others.push(limiters[(i / 4) % 2]!.consume('token', `quiet-${i % 3}`));
          if (i % 20 === 0) others.push(limiters[1]!.consume('login', 'busy'));
        }
        const verdicts = await Promise.all(attempts);
        assert.equal(verdicts.filter((v) => v.allowed).length, 120);
        assert.deepEqual(allowedCounts(verdicts), oneTo(120), 'each count 1…120 given once');
        for (const v of verdicts) {
          assert.equal(v.limit, 120);
          assert.ok(v.resetS >= 1 && v.resetS <= 60, `reset in ${v.resetS} s`);
          // Counted in the database, the statement also read the shared change counter (for the
          // token cache's coherence check, services/coherence/token-cache.ts).
          assert.deepEqual(
            Object.keys(v).sort(),
            store === 'database'
              ? ['allowed', 'change', 'limit', 'remaining', 'resetS']
              : ['allowed', 'limit', 'remaining', 'resetS'],
            'the count, and the change counter when counted in the database',
          );
          if (store === 'database') assert.equal(typeof v.change, 'number');
          if (!v.allowed) assert.equal(v.remaining, 0);
        }
        // Other windows in the same batches keep their own counts: 17 + 17 + 16 attempts, and 10 logins of 8.
        const other = await Promise.all(others);
        assert.equal(other.filter((v) => v.limit === 120 && v.allowed).length, 50);
        assert.deepEqual(allowedCounts(other.filter((v) => v.limit === 8)), oneTo(8));
        assert.equal(other.filter((v) => v.limit === 8 && !v.allowed).length, 2);

        const stats = limiters.map((l) => l.stats());
        assert.equal(stats[0]!.attempts + stats[1]!.attempts, 260);
        for (const s of stats) assert.ok(s.batches >= 1 && s.batches < s.attempts / 10, JSON.stringify(s));

        // A later attempt, alone in its batch, continues the same window.
        const after = await limiters[0]!.consume('token', 'quiet-0');
        assert.equal(after.remaining, 120 - 18);
      } finally {
        for (const r of redis) r.disconnect();
        await second.close();
        await database.close();
      }
    });
  }

  test('a failed batch fails each of its attempts, and the next batch is counted', async () => {
    // Redis that cannot be reached, and does not queue commands until it can.
    const away = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    });
    away.on('error', () => {});
    try {
      const limits = createRateLimits({
        redis: away,
        db: null,
        clock: Date.now,
        prefix: `palisade-test-away-${process.pid}`,
      });
      const settled = await Promise.allSettled(Array.from({ length: 5 }, () => limits.consume('token', 'x')));
      assert.deepEqual(
        settled.map((s) => s.status),
        ['rejected', 'rejected', 'rejected', 'rejected', 'rejected'],
      );
      assert.equal(limits.stats().batches, 1);
      const again = await Promise.allSettled([limits.consume('token', 'x')]);
      assert.equal(again[0]!.status, 'rejected');
      assert.equal(limits.stats().batches, 2);
    } finally {
      away.disconnect();
    }
  });
});

describe('exactly 120 v1 requests a minute across two console processes', { skip: !pgUrl }, () => {
  const transports: Array<'database' | 'redis'> = redisUrl ? ['database', 'redis'] : ['database'];
  for (const transport of transports) {
    test(`2 requests, then 200 at once, alternating between the processes (${transport})`, async () => {
      const { reader, writer, close } = await twoProcesses('postgres', transport);
      try {
        const user = await registerUser(writer);
        const token = await createToken(writer, user, 'burst');
        const apps = [reader, writer];
        const get = (i: number) =>
          apps[i % 2]!.inject({ method: 'GET', url: '/api/v1/me', headers: { authorization: `Bearer ${token}` } });
        // One request on each first: each process has the token's lookup in memory, as in steady use.
        for (const i of [0, 1]) assert.equal((await get(i)).statusCode, 200);
        const before = apps.map((app) => app.limits.stats());
        const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => get(i)));
        const ok = answers.filter((a) => a.statusCode === 200);
        const limited = answers.filter((a) => a.statusCode === 429);
        assert.equal(ok.length, 118);
        assert.equal(limited.length, 82);
        assert.deepEqual(
          ok.map((a) => Number(a.headers['x-ratelimit-remaining'])).sort((a, b) => a - b),
          oneTo(118).map((n) => n - 1),
          'each remaining count 117…0 answered once',
        );
        for (const a of limited) {
          assert.ok(Number(a.headers['retry-after']) >= 1);
          assert.equal(a.headers['x-ratelimit-remaining'], '0');
        }
        apps.forEach((app, i) => {
          const { attempts, batches } = app.limits.stats();
          assert.equal(attempts - before[i]!.attempts, 100);
          assert.ok(batches - before[i]!.batches < 100 / 4, `${batches - before[i]!.batches} batches for 100 requests`);
        });
      } finally {
        await close();
      }
    });
  }
});
