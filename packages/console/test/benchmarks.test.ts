import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { benchmarkRunSchema, generateToken, hashToken } from '@palisade/protocol';
import {
  benchmarkReport,
  createToken,
  dialects,
  insertTestServer,
  registerUser,
  type TestApp,
  type TestUser,
  testApp,
} from './support.js';

const FACTS = { os: 'Debian GNU/Linux 12', kernel: '6.1.0', cores: 4, arch: 'x64', mem_total_mb: 8000 };

for (const dialect of dialects()) {
  describe(`benchmark runs (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    let stranger: TestUser;
    let token: string;
    before(async () => {
      t = await testApp(dialect);
      owner = await registerUser(t.app);
      stranger = await registerUser(t.app);
      token = await createToken(t.app, owner);
    });
    after(() => t.close());

    async function server() {
      const row = await insertTestServer(t.app, owner, { facts: FACTS, last_seen: t.clock.now });
      const daemon = generateToken('daemon');
      await t.db
        .updateTable('servers')
        .set({ daemon_token_hash: hashToken(daemon) })
        .where('id', '=', row.id)
        .execute();
      return { id: row.id, daemon };
    }
    const dash = (method: 'GET' | 'POST', url: string, body?: unknown, user = owner) =>
      t.app.inject({
        method,
        url,
        headers: { cookie: user.cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const agent = (runToken: string | null, path: string, body?: unknown) =>
      t.app.inject({
        method: 'POST',
        url: path,
        headers: { 'content-type': 'application/json', ...(runToken ? { authorization: `Bearer ${runToken}` } : {}) },
        payload: JSON.stringify(body ?? {}),
      });
    /** The job the next check-in hands out. */
    async function handOut(daemon: string) {
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/agent/checkin',
        headers: { authorization: `Bearer ${daemon}`, 'content-type': 'application/json' },
        payload: JSON.stringify({
          agent_version: '0.1.0',
          hostname: 'bench-host',
          facts: FACTS,
          sample: {
            ts: t.clock.now,
            cpu_pct: 5,
            mem_used_mb: 1000,
            mem_total_mb: 8000,
            disk_used_pct: 30,
            load1: 0.1,
            rx_bps: 0,
            tx_bps: 0,
          },
        }),
      });
      assert.equal(res.statusCode, 200, res.body);
      return res.json().data.jobs as {
        kind: string;
        run_id: number;
        token: string;
        label: string;
        report_path: string;
      }[];
    }
    const runRow = (id: number) =>
      t.db.selectFrom('benchmark_runs').selectAll().where('id', '=', id).executeTakeFirstOrThrow();

    test('a run goes pending → running → done through the agent; v1 then lists it without log or token', async () => {
      const { id, daemon } = await server();
      const created = await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'first' });
      assert.equal(created.statusCode, 201);
      const run = created.json().data.run;
      assert.equal(run.status, 'pending');
      assert.equal(
        (await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'second' })).statusCode,
        409,
        'one run at a time',
      );

      const [job, ...rest] = await handOut(daemon);
      assert.equal(rest.length, 0);
      assert.equal(job?.kind, 'benchmark');
      assert.equal(job?.run_id, run.id);
      assert.match(job!.token, /^bmt_/);
      assert.deepEqual(await handOut(daemon), [], 'handed out once while the agent is on it');
      assert.equal((await runRow(run.id)).token_hash, hashToken(job!.token), 'only the hash is kept');

      assert.equal((await agent(job!.token, `${job!.report_path}/start`)).statusCode, 200);
      assert.equal(
        (await agent(job!.token, `${job!.report_path}/log`, { lines: ['cpu: 4 threads', 'disk: 256 MiB'] })).statusCode,
        200,
      );
      const v1Before = await t.app.inject({
        method: 'GET',
        url: `/api/v1/servers/${id}/benchmarks`,
        headers: { authorization: `Bearer ${token}` },
      });
      assert.deepEqual(v1Before.json().data.benchmarks, [], 'running runs are not listed');
      const done = await agent(job!.token, `${job!.report_path}/result`, benchmarkReport());
      assert.equal(done.statusCode, 200, done.body);

      const v1 = await t.app.inject({
        method: 'GET',
        url: `/api/v1/servers/${id}/benchmarks`,
        headers: { authorization: `Bearer ${token}` },
      });
      const [listed] = v1.json().data.benchmarks;
      benchmarkRunSchema.strict().parse(listed);
      assert.equal(listed.verified, true);
      assert.equal(listed.finished_at, t.clock.now);
      for (const section of ['cpu', 'disk', 'network', 'stability', 'total'] as const) {
        assert.ok(listed.scores[section] > 0 && listed.scores[section] <= 100, section);
      }
      assert.ok(!v1.body.includes('cpu: 4 threads') && !v1.body.includes(job!.token));
      const dashboard = (await dash('GET', `/api/servers/${id}/benchmarks`)).json().data.runs[0];
      assert.match(dashboard.log, /cpu: 4 threads\ndisk: 256 MiB\n/);
      assert.equal(dashboard.checks.length, 5);
      assert.ok(dashboard.checks.every((c: { ok: boolean }) => c.ok));
      // The raw figures are kept with the scores, for the dashboard's table and comparison.
      assert.deepEqual(dashboard.measurements, benchmarkReport().measurements);
      assert.deepEqual(dashboard.hardware, benchmarkReport().hardware);
      assert.deepEqual(dashboard.skipped, {});
      // A run stored before the figures were kept (its column holds the hardware alone) still reads.
      await t.db.updateTable('benchmark_runs').set({ hardware: '{"cores":2}' }).where('id', '=', run.id).execute();
      const older = (await dash('GET', `/api/servers/${id}/benchmarks`)).json().data.runs[0];
      assert.deepEqual([older.hardware, older.measurements, older.skipped], [{ cores: 2 }, null, {}]);
    });

    test('bad tokens, another run’s token, reports after done and malformed results change nothing', async () => {
      const { id, daemon } = await server();
      const run = (await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'guarded' })).json().data.run;
      const [job] = await handOut(daemon);
      const path = job!.report_path;
      for (const bad of [null, 'bmt_short', generateToken('benchmark'), daemon]) {
        assert.equal((await agent(bad, `${path}/start`)).statusCode, 401);
      }
      assert.equal((await runRow(run.id)).status, 'pending');
      await agent(job!.token, `${path}/start`);
      const malformed: unknown[] = [
        {},
        { ...benchmarkReport(), measurements: { ...benchmarkReport().measurements, cpu: { single_mb_s: 'fast' } } },
        { ...benchmarkReport(), hardware: { cores: 0, mem_total_mb: 1 } },
        { ...benchmarkReport(), duration_ms: -1 },
        { error: '' },
      ];
      for (const body of malformed) {
        const res = await agent(job!.token, `${path}/result`, body);
        assert.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 60));
        assert.match(res.json().error, /^[a-z_.0-9]+: /);
      }
      assert.equal((await runRow(run.id)).status, 'running');
      assert.equal((await agent(job!.token, `${path}/result`, benchmarkReport())).statusCode, 200);
      const finished = await runRow(run.id);
      for (const late of ['start', 'result', 'log']) {
        const res = await agent(
          job!.token,
          `${path}/${late}`,
          late === 'log' ? { lines: ['late'] } : benchmarkReport(),
        );
        assert.equal(res.statusCode, 409, late);
      }
      assert.deepEqual(await runRow(run.id), finished, 'nothing changed after done');

      // Another server's run token cannot report for this run, and vice versa.
      const other = await server();
      await dash('POST', `/api/servers/${other.id}/benchmarks`, { label: 'other' });
      const [otherJob] = await handOut(other.daemon);
      assert.equal((await agent(otherJob!.token, `/api/agent/benchmarks/${run.id}/start`)).statusCode, 404);
      assert.equal((await agent(otherJob!.token, '/api/agent/benchmarks/abc/start')).statusCode, 404);
    });

    test('forged reports come out unverified, naming the failed check', async () => {
      const forgeries: [Record<string, unknown>, string][] = [
        [{ hardware: { cores: 64, mem_total_mb: 8000 } }, 'cores match'],
        [{ hardware: { cores: 4, mem_total_mb: 64_000 } }, 'memory matches'],
        [
          {
            measurements: {
              ...benchmarkReport().measurements,
              cpu: { single_mb_s: 100, multi_mb_s: 5000, threads: 4 },
            },
          },
          'multi-core speed-up possible',
        ],
        [
          {
            measurements: {
              ...benchmarkReport().measurements,
              disk: { seq_write_mb_s: 90_000, seq_read_mb_s: 900, rand_write_iops: 10 },
            },
          },
          'disk figures plausible',
        ],
        [
          {
            measurements: {
              ...benchmarkReport().measurements,
              network: { down_mbit_s: 9e9, up_mbit_s: 1, latency_ms: 1 },
            },
          },
          'network figures plausible',
        ],
      ];
      for (const [overrides, failing] of forgeries) {
        const { id, daemon } = await server();
        const run = (await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'forged' })).json().data.run;
        const [job] = await handOut(daemon);
        await agent(job!.token, `${job!.report_path}/start`);
        assert.equal(
          (await agent(job!.token, `${job!.report_path}/result`, benchmarkReport(overrides))).statusCode,
          200,
        );
        const row = await runRow(run.id);
        assert.equal(row.status, 'done');
        assert.equal(row.verified, 0, failing);
        const failed = JSON.parse(row.checks)
          .filter((c: { ok: boolean }) => !c.ok)
          .map((c: { name: string }) => c.name);
        assert.deepEqual(failed, [failing]);
      }
    });

    test('a section that could not be measured is null, and total is the mean of the others', async () => {
      const { id, daemon } = await server();
      const run = (await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'no network' })).json().data.run;
      const [job] = await handOut(daemon);
      await agent(job!.token, `${job!.report_path}/start`);
      const body = benchmarkReport({
        measurements: { ...benchmarkReport().measurements, network: null },
        skipped: { network: 'console unreachable' },
      });
      await agent(job!.token, `${job!.report_path}/result`, body);
      const row = await runRow(run.id);
      assert.equal(row.score_network, null);
      const expected =
        Math.round(((row.score_cpu! * 35 + row.score_disk! * 25 + row.score_stability! * 20) / 80) * 10) / 10;
      assert.equal(row.score_total, expected);
      assert.match(row.log, /network not measured: console unreachable/);
      // Its check did not run: not a pass, not a failure, and said so.
      const network = JSON.parse(row.checks).find((c: { name: string }) => c.name === 'network figures plausible');
      assert.deepEqual(network, {
        name: 'network figures plausible',
        ok: true,
        skipped: true,
        detail: 'not checked: network not measured',
      });
      assert.ok(
        JSON.parse(row.checks)
          .filter((c: { name: string }) => c.name !== 'network figures plausible')
          .every((c: { skipped?: boolean }) => c.skipped === undefined),
      );
      const memory = JSON.parse(row.checks).find((c: { name: string }) => c.name === 'memory matches');
      assert.match(memory.detail, /^reported \d+ MiB, check-ins say \d+ MiB$/);
    });

    test('a failure report ends the run failed, and failed runs are not listed by v1', async () => {
      const { id, daemon } = await server();
      const run = (await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'doomed' })).json().data.run;
      const [job] = await handOut(daemon);
      await agent(job!.token, `${job!.report_path}/start`);
      assert.equal((await agent(job!.token, `${job!.report_path}/result`, { error: 'disk full' })).statusCode, 200);
      const row = await runRow(run.id);
      assert.equal(row.status, 'failed');
      assert.equal(row.error, 'disk full');
      const v1 = await t.app.inject({
        method: 'GET',
        url: `/api/v1/servers/${id}/benchmarks`,
        headers: { authorization: `Bearer ${token}` },
      });
      assert.deepEqual(v1.json().data.benchmarks, []);
    });

    test('stuck runs fail after their timeout; an unstarted hand-out is re-issued with a new token', async () => {
      const { id, daemon } = await server();
      const run = (await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'slow' })).json().data.run;
      const [first] = await handOut(daemon);
      t.clock.advance(61_000);
      const [second] = await handOut(daemon);
      assert.notEqual(second!.token, first!.token);
      assert.equal((await agent(first!.token, `${first!.report_path}/start`)).statusCode, 401, 'the old token is void');
      assert.equal((await agent(second!.token, `${second!.report_path}/start`)).statusCode, 200);
      t.clock.advance(5 * 60_000 + 1);
      assert.equal(await t.app.services.benchmarks.failStuckRuns(), 1);
      const row = await runRow(run.id);
      assert.equal(row.status, 'failed');
      assert.equal(row.error, 'no progress from the agent for 5 minutes');

      const never = (await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'never' })).json().data.run;
      t.clock.advance(15 * 60_000 + 1);
      await t.app.services.benchmarks.failStuckRuns();
      assert.match((await runRow(never.id)).error ?? '', /never started/);
    });

    test('run routes check ownership and labels', async () => {
      const { id } = await server();
      assert.equal((await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'x' }, stranger)).statusCode, 404);
      assert.equal((await dash('GET', `/api/servers/${id}/benchmarks`, undefined, stranger)).statusCode, 404);
      const empty = await dash('POST', `/api/servers/${id}/benchmarks`, { label: ' ' });
      assert.equal(empty.statusCode, 400);
      assert.equal(empty.json().error, 'label: must not be empty');
    });

    test('the network payload endpoints serve and accept bytes for a run token', async () => {
      const { id, daemon } = await server();
      await dash('POST', `/api/servers/${id}/benchmarks`, { label: 'net' });
      const [job] = await handOut(daemon);
      const auth = { authorization: `Bearer ${job!.token}` };
      const down = await t.app.inject({
        method: 'GET',
        url: `${job!.report_path}/payload?bytes=100000`,
        headers: auth,
      });
      assert.equal(down.statusCode, 200);
      assert.equal(down.rawPayload.length, 100_000);
      const up = await t.app.inject({
        method: 'POST',
        url: `${job!.report_path}/payload`,
        headers: { ...auth, 'content-type': 'application/octet-stream' },
        payload: Buffer.alloc(2_000_000),
      });
      assert.equal(up.statusCode, 200, up.body);
      assert.equal(up.json().data.bytes, 2_000_000);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: `${job!.report_path}/payload?bytes=-1`, headers: auth })).statusCode,
        400,
      );
      assert.equal((await t.app.inject({ method: 'GET', url: `${job!.report_path}/ping` })).statusCode, 401);
    });
  });
}
