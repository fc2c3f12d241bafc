import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SCORE_WINDOW_MAX_SAMPLES } from '../src/services/checkin-score-windows.js';
import { createCheckinWriter } from '../src/services/checkin-writer.js';
import { scoreFromSamples } from '../src/services/score.js';
import {
  dialects,
  enrolledTestServer,
  registerUser,
  type TestApp,
  type TestUser,
  testApp,
  testSample,
} from './support.js';

const payload = (hostname: string, ts: number, cpu: number, past?: unknown[]) => ({
  agent_version: '0.1.0',
  hostname,
  facts: { os: 'Debian GNU/Linux 12', cores: 2 },
  sample: testSample(ts, cpu),
  ...(past ? { past_samples: past } : {}),
});

/** A write as the check-ins service hands it over (services/checkins.service.ts). */
const write = (serverId: number, ts: number, cpu: number) => ({
  serverId,
  accountId: 0,
  sample: {
    ts,
    cpu_pct: cpu,
    mem_used_mb: 2000,
    mem_total_mb: 4000,
    disk_used_pct: 50,
    load1: 0.5,
    rx_bps: 1,
    tx_bps: 1,
    extra: '{}',
  },
  past: [],
  cores: 2,
  fields: {
    hostname: `host-${serverId}`,
    public_ip: null,
    facts: '{"cores":2}',
    agent_version: '0.1.0',
    last_seen: ts,
    latest_sample: JSON.stringify({ ts, cpu_pct: cpu }),
    attacks_active: null,
  },
});

for (const dialect of dialects()) {
  describe(`check-ins written together (${dialect})`, () => {
    const isPostgresDialect = dialect === 'postgres';
    let t: TestApp;
    let owner: TestUser;
    before(async () => {
      t = await testApp(dialect);
      owner = await registerUser(t.app);
    });
    after(() => t.close());

    const checkin = (daemon: string, body: unknown) =>
      t.app.inject({
        method: 'POST',
        url: '/api/agent/checkin',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon}` },
        payload: JSON.stringify(body),
      });
    const samplesOf = async (serverId: number) =>
      (
        await t.db
          .selectFrom('samples')
          .select(['ts', 'cpu_pct'])
          .where('server_id', '=', serverId)
          .where('resolution', '=', 'raw')
          .orderBy('ts')
          .execute()
      ).map((r) => [Number(r.ts), r.cpu_pct]);

    test('many check-ins at once, some of one server, are each stored as if they came one by one', async () => {
      const servers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => enrolledTestServer(t.app, owner, { name: `group-${i}` })),
      );
      const now = t.clock.now;
      // Every server checks in twice at once; then all again at once, with outage samples that
      // overlap the first two (sent again) and one new one, which must be stored once. (Requests
      // in flight together have no order, so the overlap is sent in the second round.)
      const first = await Promise.all(
        servers.flatMap(({ daemon }, i) => [
          checkin(daemon, payload(`group-${i}`, now - 20_000, 10)),
          checkin(daemon, payload(`group-${i}`, now - 10_000, 20)),
        ]),
      );
      const second = await Promise.all(
        servers.map(({ daemon }, i) =>
          checkin(
            daemon,
            payload(`group-${i}`, now, 30 + i, [
              testSample(now - 20_000, 10),
              testSample(now - 10_000, 20),
              testSample(now - 15_000, 15),
            ]),
          ),
        ),
      );
      const answers = [...first, ...second];
      assert.deepEqual(
        answers.map((a) => a.statusCode),
        answers.map(() => 200),
        answers.map((a) => a.body).join('\n'),
      );
      for (const [i, { serverId }] of servers.entries()) {
        assert.deepEqual(await samplesOf(serverId), [
          [now - 20_000, 10],
          [now - 15_000, 15],
          [now - 10_000, 20],
          [now, 30 + i],
        ]);
        const row = await t.db
          .selectFrom('servers')
          .select(['hostname', 'last_seen', 'latest_sample', 'score_base', 'score_base_total', 'agent_version'])
          .where('id', '=', serverId)
          .executeTakeFirstOrThrow();
        assert.equal(row.hostname, `group-${i}`);
        assert.equal(Number(row.last_seen), now);
        assert.equal(row.agent_version, '0.1.0');
        assert.ok(row.score_base && row.score_base_total !== null, 'the score is refreshed');
        const components = JSON.parse(row.score_base).components as Record<string, number>;
        assert.equal(
          Object.values(components).reduce((a, b) => a + b, 0),
          Number(row.score_base_total),
        );
      }
    });

    test(`the score reads at most the ${SCORE_WINDOW_MAX_SAMPLES} newest samples of its ten minutes`, async () => {
      const { serverId, daemon } = await enrolledTestServer(t.app, owner, { name: 'fast' });
      const now = t.clock.now;
      // An agent that checked in every second: 400 busy samples, then quiet ones up to the check-in.
      const row = (ts: number, cpu: number) => {
        const { disk_mount: _mount, ...figures } = testSample(ts, cpu);
        return { server_id: serverId, resolution: 'raw' as const, ...figures, extra: '{}' };
      };
      const rows = [
        ...Array.from({ length: 400 }, (_, i) => row(now - 590_000 + i * 1000, 100)),
        ...Array.from({ length: SCORE_WINDOW_MAX_SAMPLES }, (_, i) => row(now - 150_000 + i * 1000, 10)),
      ];
      for (let i = 0; i < rows.length; i += 100)
        await t.db
          .insertInto('samples')
          .values(rows.slice(i, i + 100))
          .execute();
      assert.equal((await checkin(daemon, payload('fast', now, 10))).statusCode, 200);
      const stored = await t.db
        .selectFrom('servers')
        .select('score_base')
        .where('id', '=', serverId)
        .executeTakeFirstOrThrow();
      // All 521 would average 79 % CPU; the newest 120 average 10 %.
      assert.equal(JSON.parse(stored.score_base!).components.cpu, 200);
    });

    const cpuPoints = async (serverId: number) =>
      JSON.parse(
        (await t.db.selectFrom('servers').select('score_base').where('id', '=', serverId).executeTakeFirstOrThrow())
          .score_base!,
      ).components.cpu as number;

    test('a window kept in memory is not trusted once another process wrote the server', async () => {
      const { serverId } = await enrolledTestServer(t.app, owner, { name: 'two-processes' });
      // Two writers are two console processes: each keeps the windows it wrote (checkin-score-windows.ts).
      const a = createCheckinWriter(t.db);
      const b = createCheckinWriter(t.db);
      const ts = t.clock.now + 100_000;
      await a.write(write(serverId, ts, 70));
      await a.write(write(serverId, ts + 1000, 70));
      assert.equal(await cpuPoints(serverId), 200, 'CPU averaged 70 %');
      await b.write(write(serverId, ts + 2000, 100));
      // 70, 70, 100, 70 average 77.5 %: a writer that trusted its own window would leave out the 100.
      await a.write(write(serverId, ts + 3000, 70));
      assert.equal(await cpuPoints(serverId), Math.round((200 * (100 - 77.5)) / 30));
      await a.write(write(serverId, ts + 4000, 100));
      // 70, 70, 100, 70, 100: 82 %.
      assert.equal(await cpuPoints(serverId), Math.round((200 * (100 - 82)) / 30));
    });

    test('with its windows kept, a group is one statement; a row another process wrote is written after it', async () => {
      const servers = await Promise.all(
        Array.from({ length: 3 }, (_, i) => enrolledTestServer(t.app, owner, { name: `one-statement-${i}` })),
      );
      const [x, y, z] = servers.map((s) => s.serverId) as [number, number, number];
      const a = createCheckinWriter(t.db);
      const b = createCheckinWriter(t.db);
      const ts = t.clock.now + 400_000;
      // First check-ins: no window kept yet, so the group is the transaction that reads them.
      await Promise.all([a.write(write(x, ts, 70)), a.write(write(y, ts, 70)), a.write(write(z, ts, 70))]);
      assert.deepEqual(a.stats(), { keptGroups: 0, rowsLeft: 0 });
      // Another process writes y; then a group of x (twice), y and z: one statement, which leaves y's
      // row to the transaction after it (y's mark is b's), and stores each sample once.
      await b.write(write(y, ts + 1000, 100));
      await Promise.all([
        a.write(write(x, ts + 2000, 100)),
        a.write(write(x, ts + 3000, 100)),
        a.write(write(y, ts + 2000, 70)),
        a.write(write(z, ts + 2000, 100)),
      ]);
      assert.deepEqual(a.stats(), isPostgresDialect ? { keptGroups: 1, rowsLeft: 1 } : { keptGroups: 0, rowsLeft: 0 });
      assert.deepEqual(
        (await samplesOf(x)).map(([at]) => at),
        [ts, ts + 2000, ts + 3000],
      );
      assert.deepEqual(
        (await samplesOf(y)).map(([at]) => at),
        [ts, ts + 1000, ts + 2000],
      );
      // x: 70, 100, 100 average 90 %; y: 70, 100, 70 average 80 %; z: 70, 100 average 85 %.
      const points = (meanCpu: number) => Math.round((200 * (100 - meanCpu)) / 30);
      assert.equal(await cpuPoints(x), points(90));
      assert.equal(await cpuPoints(y), points(80));
      assert.equal(await cpuPoints(z), points(85));
      const lastSeen = async (id: number) =>
        Number(
          (await t.db.selectFrom('servers').select('last_seen').where('id', '=', id).executeTakeFirstOrThrow())
            .last_seen,
        );
      assert.deepEqual([await lastSeen(x), await lastSeen(y), await lastSeen(z)], [ts + 3000, ts + 2000, ts + 2000]);
      // y's window is a's again: the next group of all three is one statement that writes every row.
      await Promise.all([
        a.write(write(x, ts + 4000, 70)),
        a.write(write(y, ts + 4000, 70)),
        a.write(write(z, ts + 4000, 70)),
      ]);
      assert.deepEqual(a.stats(), isPostgresDialect ? { keptGroups: 2, rowsLeft: 1 } : { keptGroups: 0, rowsLeft: 0 });
      assert.equal(await cpuPoints(y), points(77.5));
    });

    test('a score from a kept window is the one the stored samples give, to the last bit', async () => {
      // A CPU figure whose 4-byte rounding (PostgreSQL's `real`) moves the CPU points: the mean of the
      // stored figure and the agent's exact one rounds differently from the stored figure alone.
      const at = (cpu: number, ts: number) => ({
        ...write(0, ts, cpu).sample,
        extra: undefined,
      });
      const points = (cpus: number[]) =>
        scoreFromSamples(
          cpus.map((c, i) => at(c, i * 1000)),
          2,
        ).components.cpu;
      let cpu: number | undefined;
      for (let k = 0; k < 200 && cpu === undefined; k += 1) {
        const edge = 100 - (30 * (k + 0.5)) / 200;
        for (let d = -4e-6; d <= 4e-6 && cpu === undefined; d += 1e-7) {
          const v = edge + d;
          if (points([Math.fround(v), v]) !== points([Math.fround(v), Math.fround(v)])) cpu = v;
        }
      }
      assert.ok(cpu !== undefined, 'a figure that 4-byte rounding moves across a point');
      const kept = await enrolledTestServer(t.app, owner, { name: 'kept-bits' });
      const read = await enrolledTestServer(t.app, owner, { name: 'read-bits' });
      const ts = t.clock.now + 300_000;
      // One writer keeps its window; a new writer each time reads the window from the table.
      const writer = createCheckinWriter(t.db);
      await writer.write(write(kept.serverId, ts, cpu));
      await writer.write(write(kept.serverId, ts + 1000, cpu));
      await createCheckinWriter(t.db).write(write(read.serverId, ts, cpu));
      await createCheckinWriter(t.db).write(write(read.serverId, ts + 1000, cpu));
      assert.equal(await cpuPoints(kept.serverId), await cpuPoints(read.serverId));
    });

    test(`a kept window ends as the stored one: the newest ${SCORE_WINDOW_MAX_SAMPLES} samples of ten minutes`, async () => {
      const { serverId } = await enrolledTestServer(t.app, owner, { name: 'kept' });
      const writer = createCheckinWriter(t.db);
      const ts = t.clock.now + 200_000;
      // 130 busy samples (100 % CPU) a second apart, then 120 less busy ones (80 %): the busy ones
      // leave the window by count, then all of it by time.
      for (let i = 0; i < 130; i += 1) await writer.write(write(serverId, ts + i * 1000, 100));
      assert.equal(await cpuPoints(serverId), 0);
      const points = (meanCpu: number) => Math.round((200 * (100 - meanCpu)) / 30);
      for (let i = 130; i < 249; i += 1) await writer.write(write(serverId, ts + i * 1000, 80));
      assert.equal(await cpuPoints(serverId), points((119 * 80 + 100) / 120));
      await writer.write(write(serverId, ts + 249_000, 80));
      assert.equal(await cpuPoints(serverId), points(80));
      // Eleven minutes later the window holds only the new sample.
      await writer.write(write(serverId, ts + 249_000 + 660_000, 90));
      assert.equal(await cpuPoints(serverId), points(90));
    });

    test('a steady stream of check-ins is never left waiting between two groups', async () => {
      const servers = await Promise.all(
        Array.from({ length: 16 }, (_, i) => enrolledTestServer(t.app, owner, { name: `stream-${i}` })),
      );
      const writer = createCheckinWriter(t.db);
      let written = 0;
      // 64 callers, each writing its next check-in a few microtask turns after its last one is
      // committed (a different number each), so some arrive while the writer is finishing a drain.
      await Promise.all(
        Array.from({ length: 64 }, async (_, c) => {
          for (let i = 0; i < 20; i += 1) {
            await writer.write(write(servers[c % servers.length]!.serverId, t.clock.now + 10_000 + c * 100 + i, 5));
            written += 1;
            for (let hop = 0; hop < (c + i) % 16; hop += 1) await Promise.resolve();
          }
        }),
      );
      assert.equal(written, 64 * 20);
      // A check-in that arrives while the writer is finishing its drain, with nothing after it: it
      // is written too (k microtask turns after the last commit; one of them lands in that moment).
      // A writer that left it waiting hangs here, and the test runner's timeout fails the test.
      const { serverId } = servers[0]!;
      for (let k = 0; k < 40; k += 1) {
        await writer.write(write(serverId, t.clock.now + 20_000 + 2 * k, 5));
        for (let hop = 0; hop < k; hop += 1) await Promise.resolve();
        await writer.write(write(serverId, t.clock.now + 20_000 + 2 * k + 1, 5));
      }
    });

    test('a write that fails fails alone: the others of its group are committed', async () => {
      const a = await enrolledTestServer(t.app, owner, { name: 'alone-a' });
      const b = await enrolledTestServer(t.app, owner, { name: 'alone-b' });
      const writer = createCheckinWriter(t.db);
      const ts = t.clock.now + 1000;
      // Queued in one turn of the event loop: one group. The missing server fails its foreign key.
      const outcomes = await Promise.allSettled([
        writer.write(write(a.serverId, ts, 41)),
        writer.write(write(2 ** 31 - 7, ts, 42)),
        writer.write(write(b.serverId, ts, 43)),
      ]);
      assert.deepEqual(
        outcomes.map((o) => o.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      assert.deepEqual((await samplesOf(a.serverId)).at(-1), [ts, 41]);
      assert.deepEqual((await samplesOf(b.serverId)).at(-1), [ts, 43]);
      assert.equal(
        (
          await t.db
            .selectFrom('samples')
            .select('id')
            .where('server_id', '=', 2 ** 31 - 7)
            .execute()
        ).length,
        0,
      );
    });
  });
}
