import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createRateLimits } from '../src/plugins/rate-limits.js';
import { acquireLease, releaseLease } from '../src/repositories/job-leases.repository.js';
import { dialects, type TestDatabase, testClock, testDatabase } from './support.js';

for (const dialect of dialects()) {
  describe(`shared state for several console processes (${dialect})`, () => {
    let database: TestDatabase;
    before(async () => {
      database = await testDatabase(dialect);
    });
    after(() => database.close());

    test('a job lease has one holder until it is released or expires', async () => {
      const now = 1_000_000;
      assert.equal(await acquireLease(database.db, 'rollup', 'a', now, 60_000), true);
      assert.equal(await acquireLease(database.db, 'rollup', 'b', now + 1000, 60_000), false);
      assert.equal(await acquireLease(database.db, 'rollup', 'a', now + 2000, 60_000), true, 'the holder may renew');
      assert.equal(
        await acquireLease(database.db, 'rollup', 'b', now + 62_001, 60_000),
        true,
        'an expired lease is free',
      );
      assert.equal(await acquireLease(database.db, 'rollup', 'a', now + 62_002, 60_000), false);
      await releaseLease(database.db, 'rollup', 'b');
      assert.equal(await acquireLease(database.db, 'rollup', 'a', now + 62_003, 60_000), true);
    });

    test('database-counted windows allow exactly the limit under concurrent attempts, then reset', async () => {
      const clock = testClock();
      const limits = createRateLimits({ redis: null, db: database.db, clock: () => clock.now });
      const verdicts = await Promise.all(Array.from({ length: 40 }, () => limits.consume('login', '192.0.2.1')));
      assert.equal(verdicts.filter((v) => v.allowed).length, 8);
      assert.ok(verdicts.every((v) => v.resetS >= 1 && v.resetS <= 60));
      assert.equal((await limits.consume('login', '192.0.2.2')).allowed, true, 'another key has its own window');
      clock.advance(60_000);
      const fresh = await limits.consume('login', '192.0.2.1');
      assert.equal(fresh.allowed, true);
      assert.equal(fresh.remaining, 7);
    });
  });
}
