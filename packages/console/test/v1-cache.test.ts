import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ONLINE_WINDOW_MS } from '@palisade/protocol';
import type { FastifyInstance } from 'fastify';
import { createBoundaries, createServices } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { serverScoreTotal } from '../src/services/score.js';
import { serverSummary, summaryExpiresAt } from '../src/services/servers/views.js';
import {
  createToken,
  dialects,
  enrolledTestServer,
  registerUser,
  type TestApp,
  testApp,
  testSample,
} from './support.js';
import { twoProcesses } from './two-processes.js';

// v1 reads from memory (docs/performance.md, "v1 reads from memory"): the answers stay right while
// they are cached — after check-ins, edits, revocations, and the passing of time.

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

async function list(app: FastifyInstance, token: string) {
  const res = await app.inject({ method: 'GET', url: '/api/v1/servers', headers: bearer(token) });
  return { status: res.statusCode, servers: res.statusCode === 200 ? res.json().data.servers : null };
}

function checkinBody(now: number, hostname: string) {
  return {
    agent_version: '0.1.0',
    hostname,
    facts: { os: 'Debian 12', cores: 2 },
    sample: testSample(now),
  };
}

describe('the time-derived v1 fields: how long an answer holds', () => {
  const row = (lastSeen: number | null, base: number | null) => ({
    id: 1,
    name: 'web',
    hostname: 'web.example.net',
    public_ip: null,
    score_base_total: base,
    attacks_active: null,
    tags: '[]',
    last_seen: lastSeen,
    last_call_ok_at: null,
    last_call_error_at: null,
    last_call_error: null,
  });

  test('the summary is the same from now until just before it expires, for ages from 0 to past an hour', () => {
    const lastSeen = 1_000_000_000;
    let changes = 0;
    for (const base of [null, 0, 850]) {
      for (let age = -5_000; age < 3_700_000; age += 997) {
        const now = lastSeen + age;
        const r = row(lastSeen, base);
        const expires = summaryExpiresAt(r, now);
        if (!(expires > now)) continue; // an answer that expires at once is not kept
        const last = Number.isFinite(expires) ? expires - 1 : now + 86_400_000;
        // The summary only ever falls with time, so equal ends mean equal all along.
        assert.deepEqual(serverSummary(r, last), serverSummary(r, now), `age ${age}, base ${base}`);
        if (Number.isFinite(expires)) {
          const later = serverSummary(r, expires + 2_000);
          if (JSON.stringify(later) !== JSON.stringify(serverSummary(r, now))) changes += 1;
        }
      }
    }
    // Not only safe but tight: most expiries are followed by a change within two seconds.
    assert.ok(changes > 1000, `${changes} expiries followed by a change`);
    assert.equal(summaryExpiresAt(row(null, null), 0), Number.POSITIVE_INFINITY);
    assert.equal(serverScoreTotal(lastSeen, 850, lastSeen + 10 * ONLINE_WINDOW_MS), 850);
  });
});

for (const dialect of dialects()) {
  describe(`v1 answers from memory (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(dialect);
    });
    after(() => t.close());

    test('a repeated list is served from memory; a check-in changes the next answer', async () => {
      const user = await registerUser(t.app);
      const token = await createToken(t.app, user);
      const { serverId, daemon } = await enrolledTestServer(t.app, user);
      const first = await list(t.app, token);
      const hitsBefore = t.app.services.servers.listCacheStats().hits;
      assert.deepEqual(await list(t.app, token), first);
      assert.equal(t.app.services.servers.listCacheStats().hits, hitsBefore + 1, 'the second answer came from memory');
      assert.equal(first.servers[0].online, false);

      t.clock.advance(1_000);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/agent/checkin',
        headers: { ...bearer(daemon), 'content-type': 'application/json' },
        payload: JSON.stringify(checkinBody(t.clock.now, 'checked-in.example.net')),
      });
      assert.equal(res.statusCode, 200, res.body);
      const lookups = t.app.services.tokens.stats();
      const next = await list(t.app, token);
      if (dialect === 'sqlite') {
        // A check-in changes what the account owns, not what its token resolves to (services/coherence/).
        const after = t.app.services.tokens.stats();
        assert.deepEqual([after.hits, after.misses], [lookups.hits + 1, lookups.misses], 'the token from memory');
      }
      assert.equal(next.servers[0].id, serverId);
      assert.equal(next.servers[0].hostname, 'checked-in.example.net');
      assert.equal(next.servers[0].online, true);
      assert.equal(next.servers[0].last_seen, t.clock.now);
    });

    test('online turns false and the score decays by time alone, while the answer is cached', async () => {
      const user = await registerUser(t.app);
      const token = await createToken(t.app, user);
      const { daemon } = await enrolledTestServer(t.app, user);
      await t.app.inject({
        method: 'POST',
        url: '/api/agent/checkin',
        headers: { ...bearer(daemon), 'content-type': 'application/json' },
        payload: JSON.stringify(checkinBody(t.clock.now, 'aging.example.net')),
      });
      const fresh = (await list(t.app, token)).servers[0];
      assert.equal(fresh.online, true);
      t.clock.advance(30_000);
      assert.deepEqual((await list(t.app, token)).servers[0], fresh, 'nothing changed in 30 s');

      t.clock.advance(60_000); // 90 s: still online, freshness below full
      const decayed = (await list(t.app, token)).servers[0];
      assert.equal(decayed.online, true);
      assert.ok(decayed.score < fresh.score, `${decayed.score} < ${fresh.score}`);

      t.clock.advance(ONLINE_WINDOW_MS - 90_000 - 1); // the last millisecond online
      assert.equal((await list(t.app, token)).servers[0].online, true);
      t.clock.advance(1);
      assert.equal((await list(t.app, token)).servers[0].online, false);
    });

    test('renaming and deleting a server change the next answer', async () => {
      const user = await registerUser(t.app);
      const token = await createToken(t.app, user);
      const { serverId } = await enrolledTestServer(t.app, user);
      assert.equal((await list(t.app, token)).servers.length, 1);
      const renamed = await t.app.inject({
        method: 'PATCH',
        url: `/api/servers/${serverId}`,
        headers: { cookie: user.cookie, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'renamed' }),
      });
      assert.equal(renamed.statusCode, 200, renamed.body);
      assert.equal((await list(t.app, token)).servers[0].label, 'renamed');
      const removed = await t.app.inject({
        method: 'DELETE',
        url: `/api/servers/${serverId}`,
        headers: { cookie: user.cookie },
      });
      assert.equal(removed.statusCode, 200, removed.body);
      assert.deepEqual((await list(t.app, token)).servers, []);
    });
  });

  describe(`another process's writes are seen at once (${dialect})`, () => {
    if (dialect === 'sqlite') {
      // data_version is read at most once a millisecond (services/coherence/sqlite.ts); a write by
      // another connection returns late enough that the next request still sees it.
      test('a write by another connection just after a read from memory is seen by the next request', async () => {
        const { reader, writer, close } = await twoProcesses('sqlite', 'database');
        try {
          await reader.services.catalog.seed();
          const user = await registerUser(writer);
          const token = await createToken(writer, user, 'quick');
          for (let round = 0; round < 20; round += 1) {
            assert.equal((await list(reader, token)).status, 200, `round ${round}: enabled`);
            await writer.services.accounts.setDisabled(user.email, true);
            assert.equal((await list(reader, token)).status, 401, `round ${round}: disabled just now`);
            await writer.services.accounts.setDisabled(user.email, false);
          }
        } finally {
          await close();
        }
      });
    }
    const transports: Array<'database' | 'redis'> = ['database'];
    if (dialect === 'postgres' && process.env.PALISADE_TEST_REDIS_URL) transports.push('redis');
    for (const transport of transports) {
      test(`revoking, disabling and deleting on one process (${transport})`, async () => {
        const { config, reader, writer, close } = await twoProcesses(dialect, transport);
        try {
          await reader.services.catalog.seed();
          const user = await registerUser(writer);
          const [kept, revoked] = [await createToken(writer, user, 'kept'), await createToken(writer, user, 'gone')];
          const { serverId } = await enrolledTestServer(writer, user);
          // Both tokens and the list are now in the reader's memory.
          for (const token of [kept, revoked]) assert.equal((await list(reader, token)).servers.length, 1);
          // Once the reader has heard the writer's changes (its set-up above), lookups come from memory;
          // until then each request reads the database (a loaded machine can delay a NOTIFY).
          const deadline = Date.now() + 10_000;
          do assert.equal((await list(reader, kept)).status, 200);
          while (reader.services.tokens.stats().hits === 0 && Date.now() < deadline);
          assert.ok(reader.services.tokens.stats().hits > 0, 'token lookups were answered from memory');
          if (dialect === 'postgres' && transport === 'database') {
            // Counted in the database, the rate-limit statement reads the change counter too: a
            // lookup from memory takes no counter read of its own (services/coherence/token-cache.ts).
            const reads = reader.services.coherence.stats().counterReads;
            const hits = reader.services.tokens.stats().hits;
            for (let i = 0; i < 5; i += 1) assert.equal((await list(reader, kept)).status, 200);
            assert.equal(reader.services.tokens.stats().hits, hits + 5, 'from memory');
            assert.equal(reader.services.coherence.stats().counterReads, reads, 'no counter read of their own');
          }

          const tokens = (
            await writer.inject({ method: 'GET', url: '/api/tokens', headers: { cookie: user.cookie } })
          ).json().data.tokens as Array<{ id: number; name: string }>;
          const gone = tokens.find((x) => x.name === 'gone')!;
          const revoke = await writer.inject({
            method: 'DELETE',
            url: `/api/tokens/${gone.id}`,
            headers: { cookie: user.cookie },
          });
          assert.equal(revoke.statusCode, 200, revoke.body);
          assert.equal((await list(reader, revoked)).status, 401, 'the revoked token');
          assert.equal((await list(reader, kept)).status, 200, 'the other token still works');

          const removed = await writer.inject({
            method: 'DELETE',
            url: `/api/servers/${serverId}`,
            headers: { cookie: user.cookie },
          });
          assert.equal(removed.statusCode, 200, removed.body);
          assert.deepEqual((await list(reader, kept)).servers, [], 'the deleted server');

          if (transport === 'database') {
            // The admin CLI: services on a connection of their own, no HTTP app, no subscription.
            const cliDb = await openDatabase(config);
            const boundaries = createBoundaries(config);
            const cli = createServices({ db: cliDb.db, config, clock: Date.now, ...boundaries });
            await cli.accounts.setDisabled(user.email, true);
            boundaries.outbound.close();
            await cliDb.close();
          } else {
            await writer.services.accounts.setDisabled(user.email, true);
          }
          assert.equal((await list(reader, kept)).status, 401, 'the disabled account');
        } finally {
          await close();
        }
      });

      if (dialect === 'postgres') {
        test(`a check-in on one process changes the other's next answer, its message sent with its group or after it (${transport})`, async () => {
          const { database, reader, writer, close } = await twoProcesses(dialect, transport);
          try {
            await reader.services.catalog.seed();
            const user = await registerUser(writer);
            const token = await createToken(writer, user);
            const { serverId, daemon } = await enrolledTestServer(writer, user);
            const { account_id: accountId } = await database.db
              .selectFrom('servers')
              .select('account_id')
              .where('id', '=', serverId)
              .executeTakeFirstOrThrow();
            const checkin = async (hostname: string) => {
              const res = await writer.inject({
                method: 'POST',
                url: '/api/agent/checkin',
                headers: { ...bearer(daemon), 'content-type': 'application/json' },
                payload: JSON.stringify(checkinBody(Date.now(), hostname)),
              });
              assert.equal(res.statusCode, 200, res.body);
            };
            // The first check-in reads the server's score window: a transaction, its message after it.
            await checkin('first.example.net');
            assert.equal((await list(reader, token)).servers[0].hostname, 'first.example.net');
            assert.equal((await list(reader, token)).servers[0].hostname, 'first.example.net', 'from memory');
            // The next one is written in one statement; on the database transport its message is part of it.
            const heard: (number | null)[] = [];
            reader.services.coherence.onChange((accountId) => heard.push(accountId));
            const before = writer.services.checkins.writerStats().keptGroups;
            await checkin('second.example.net');
            assert.equal(writer.services.checkins.writerStats().keptGroups, before + 1, 'one statement');
            assert.equal((await list(reader, token)).servers[0].hostname, 'second.example.net');
            const deadline = Date.now() + 10_000;
            while (!heard.includes(Number(accountId)) && Date.now() < deadline)
              await new Promise((r) => setTimeout(r, 20));
            assert.ok(heard.includes(Number(accountId)), `the reader heard of the account: ${JSON.stringify(heard)}`);
          } finally {
            await close();
          }
        });

        test(`many changes at once go out in few messages, and every account reaches the other process (${transport})`, async () => {
          const { reader, writer, close } = await twoProcesses(dialect, transport);
          try {
            const heard = new Set<number | null>();
            reader.services.coherence.onChange((accountId) => heard.add(accountId));
            const before = writer.services.coherence.stats().published;
            const accounts = Array.from({ length: 200 }, (_, i) => 100_000 + i);
            await Promise.all(accounts.map((a) => writer.services.coherence.changed(a)));
            const published = writer.services.coherence.stats().published - before;
            assert.ok(published < accounts.length / 4, `${published} messages for ${accounts.length} changes`);
            // Each caller returned after a message carrying its account was sent; the reader gets them in order.
            const deadline = Date.now() + 10_000;
            while (accounts.some((a) => !heard.has(a)) && !heard.has(null) && Date.now() < deadline)
              await new Promise((r) => setTimeout(r, 20));
            assert.deepEqual(
              accounts.filter((a) => !heard.has(a)),
              [],
              'accounts the other process did not hear of',
            );
          } finally {
            await close();
          }
        });
      }
    }
  });
}
