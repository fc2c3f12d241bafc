import type { VerificationCheck } from '@palisade/protocol';
import {
  type BenchmarkJob,
  type BenchmarkReport,
  benchmarkReport,
  generateToken,
  hashToken,
  isWellFormedToken,
  scoreBenchmark,
} from '@palisade/protocol';
import { z } from 'zod';
import type { BenchmarkRunRow, Database } from '../db/schema.js';
import { AppError, conflict, notFound, unauthorized } from '../errors.js';
import {
  findActiveRun,
  findRunByToken,
  insertRun,
  listRuns,
  runsToHandOut,
  staleRuns,
  updateRunIf,
} from '../repositories/benchmarks.repository.js';
import { serverFactsText } from '../repositories/servers.repository.js';
import { parseInput } from '../validation.js';
import { createBatchLoader } from './batch-loader.js';
import type { CatalogService } from './catalog.service.js';
import { runView, type ServersService, serverFacts, storedReport } from './servers/index.js';

/** A pending run not started this long after its token was handed out gets a new token at the next check-in. */
export const HANDOUT_RETRY_MS = 60_000;
/** A pending run never started within this time, or a running one silent this long, is failed. */
export const PENDING_TIMEOUT_MS = 15 * 60_000;
export const QUIET_TIMEOUT_MS = 5 * 60_000;
export const LOG_MAX_CHARS = 256 * 1024;

export type { VerificationCheck };

const logBody = z.object({ lines: z.array(z.string().max(2000, 'a line is at most 2000 characters')).min(1).max(500) });
const failureBody = z.object({ error: z.string().trim().min(1).max(2000) });

/** A check whose section was not measured: nothing to contradict, so it does not fail, and says it did not run. */
const notChecked = (name: string, section: string): VerificationCheck => ({
  name,
  ok: true,
  skipped: true,
  detail: `not checked: ${section} not measured`,
});

/**
 * The console's consistency checks. `verified` is true only when every one passes; a section that
 * was not measured has nothing to contradict, so its check does not fail but is marked `skipped`,
 * and the dashboard says "Verified, CPU not measured" (docs/benchmarks.md, "Verification").
 */
export function verifyReport(report: BenchmarkReport, facts: Record<string, unknown>): VerificationCheck[] {
  const checks: VerificationCheck[] = [];
  const { hardware, measurements: m } = report;
  const factCores = typeof facts.cores === 'number' ? facts.cores : null;
  const factMem = typeof facts.mem_total_mb === 'number' ? facts.mem_total_mb : null;

  checks.push(
    factCores === null
      ? { name: 'cores match', ok: false, detail: 'the server has not reported its core count in a check-in' }
      : {
          name: 'cores match',
          ok: hardware.cores === factCores,
          detail: `reported ${hardware.cores}, check-ins say ${factCores}`,
        },
  );
  if (factMem === null) {
    checks.push({ name: 'memory matches', ok: false, detail: 'the server has not reported its memory in a check-in' });
  } else {
    const off = Math.abs(hardware.mem_total_mb - factMem);
    checks.push({
      name: 'memory matches',
      ok: off <= Math.max(64, 0.05 * factMem),
      detail: `reported ${Math.round(hardware.mem_total_mb)} MiB, check-ins say ${Math.round(factMem)} MiB`,
    });
  }
  if (m.cpu) {
    const speedup = m.cpu.single_mb_s > 0 ? m.cpu.multi_mb_s / m.cpu.single_mb_s : Number.POSITIVE_INFINITY;
    // 1.5: on a busy host the one-core pass is slowed more than the all-core one (docs/benchmarks.md).
    const limit = Math.min(m.cpu.threads, factCores ?? hardware.cores) * 1.5;
    checks.push({
      name: 'multi-core speed-up possible',
      ok: speedup <= limit,
      detail: `all-core ÷ one-core = ${speedup.toFixed(2)}, at most ${limit.toFixed(2)} for ${factCores ?? hardware.cores} cores`,
    });
  } else checks.push(notChecked('multi-core speed-up possible', 'cpu'));
  if (m.disk) {
    const ok = m.disk.seq_write_mb_s <= 15_000 && m.disk.seq_read_mb_s <= 30_000 && m.disk.rand_write_iops <= 2_000_000;
    checks.push({
      name: 'disk figures plausible',
      ok,
      detail: `${Math.round(m.disk.seq_write_mb_s)} MB/s write (≤ 15000), ${Math.round(m.disk.seq_read_mb_s)} MB/s read (≤ 30000), ${Math.round(m.disk.rand_write_iops)} IOPS (≤ 2000000)`,
    });
  } else checks.push(notChecked('disk figures plausible', 'disk'));
  if (m.network) {
    const ok = m.network.down_mbit_s <= 400_000 && m.network.up_mbit_s <= 400_000 && m.network.latency_ms > 0;
    checks.push({
      name: 'network figures plausible',
      ok,
      detail: `${Math.round(m.network.down_mbit_s)}/${Math.round(m.network.up_mbit_s)} Mbit/s (≤ 400000), ${Number(m.network.latency_ms.toPrecision(3))} ms latency (> 0)`,
    });
  } else checks.push(notChecked('network figures plausible', 'network'));
  return checks;
}

export interface BenchmarksDeps {
  db: Database;
  clock: () => number;
  /** The account's servers: a run is listed or started only on a server the account owns. */
  servers: Pick<ServersService, 'requireServer'>;
  /** Benchmarks run only where the server's plan includes them (docs/decisions.md, "Plans that tell the truth"). */
  catalog: Pick<CatalogService, 'requireCapability'>;
}

export function createBenchmarksService({ db, clock, servers, catalog }: BenchmarksDeps) {
  // Asked at every check-in: the check-ins of one turn of the event loop share one query.
  const pendingRuns = createBatchLoader((serverIds: number[]) =>
    runsToHandOut(db, serverIds, clock() - HANDOUT_RETRY_MS),
  );

  /** The run a bmt_ token belongs to; the path's run id must be that run (another run's token is refused). */
  async function runForToken(rawToken: string | null, runId: number | null): Promise<BenchmarkRunRow> {
    if (!rawToken || !isWellFormedToken('benchmark', rawToken)) throw unauthorized('missing or invalid run token');
    const run = await findRunByToken(db, hashToken(rawToken));
    if (!run) throw unauthorized('missing or invalid run token');
    if (runId === null || run.id !== runId) throw notFound('benchmark run');
    return run;
  }

  async function requireTransition(
    run: BenchmarkRunRow,
    from: BenchmarkRunRow['status'][],
    fields: Parameters<typeof updateRunIf>[3],
  ) {
    if (!from.includes(run.status) || !(await updateRunIf(db, run.id, from, fields))) {
      throw new AppError(409, `the run is ${run.status}; this report is not accepted now`);
    }
  }

  function appendLog(run: BenchmarkRunRow, lines: string[]): string {
    const log = `${run.log}${lines.map((l) => `${l.replace(/[\r\n]+/g, ' ')}\n`).join('')}`;
    return log.length > LOG_MAX_CHARS ? log.slice(log.length - LOG_MAX_CHARS) : log;
  }

  return {
    async list(accountId: number, serverId: number) {
      const server = await servers.requireServer(accountId, serverId);
      return (await listRuns(db, server.id)).map(runView);
    },

    async create(accountId: number, serverId: number, label: string) {
      const server = await servers.requireServer(accountId, serverId);
      await catalog.requireCapability(accountId, server.product_id, 'benchmarks', 'benchmarks');
      if (await findActiveRun(db, serverId)) throw conflict('a benchmark is already pending or running on this server');
      const now = clock();
      const run = await insertRun(db, {
        server_id: serverId,
        label,
        status: 'pending',
        token_hash: hashToken(generateToken('benchmark')), // replaced by the token handed to the agent
        log: '',
        score_cpu: null,
        score_disk: null,
        score_network: null,
        score_stability: null,
        score_total: null,
        verified: 0,
        checks: '[]',
        hardware: '{}',
        error: null,
        created_at: now,
        started_at: null,
        finished_at: null,
        updated_at: now,
        handed_at: null,
      });
      return runView(run);
    },

    /** Check-in job source: pending runs, each with a fresh run token (only its hash is kept). */
    async jobsFor(serverId: number): Promise<BenchmarkJob[]> {
      const now = clock();
      const jobs: BenchmarkJob[] = [];
      for (const run of (await pendingRuns(serverId)) ?? []) {
        const token = generateToken('benchmark');
        if (await updateRunIf(db, run.id, ['pending'], { token_hash: hashToken(token), handed_at: now })) {
          jobs.push({
            kind: 'benchmark',
            run_id: run.id,
            label: run.label,
            token,
            report_path: `/api/agent/benchmarks/${run.id}`,
          });
        }
      }
      return jobs;
    },

    runForToken,

    async start(run: BenchmarkRunRow) {
      const now = clock();
      await requireTransition(run, ['pending'], {
        status: 'running',
        started_at: now,
        updated_at: now,
        log: appendLog(run, ['run started']),
      });
    },

    async log(run: BenchmarkRunRow, body: unknown) {
      const { lines } = parseInput(logBody, body, 'body');
      await requireTransition(run, ['running'], { log: appendLog(run, lines), updated_at: clock() });
    },

    /** A result (`measurements`, `hardware`, …) finishes the run as done; `{error}` finishes it as failed. */
    async result(run: BenchmarkRunRow, body: unknown) {
      const now = clock();
      if (body && typeof body === 'object' && 'error' in body) {
        const { error } = parseInput(failureBody, body, 'body');
        await requireTransition(run, ['running'], {
          status: 'failed',
          error,
          finished_at: now,
          updated_at: now,
          log: appendLog(run, [`failed: ${error}`]),
        });
        return;
      }
      const report = parseInput(benchmarkReport, body, 'body');
      const facts = serverFacts(await serverFactsText(db, run.server_id));
      const scores = scoreBenchmark(report.measurements);
      const checks = verifyReport(report, facts);
      const skipped = Object.entries(report.skipped).map(([section, why]) => `${section} not measured: ${why}`);
      await requireTransition(run, ['running'], {
        status: 'done',
        score_cpu: scores.cpu,
        score_disk: scores.disk,
        score_network: scores.network,
        score_stability: scores.stability,
        score_total: scores.total,
        verified: checks.every((c) => c.ok) ? 1 : 0,
        checks: JSON.stringify(checks),
        hardware: storedReport(report),
        finished_at: now,
        updated_at: now,
        log: appendLog(run, [...skipped, `done: total ${scores.total ?? 'n/a'}`]),
      });
    },

    /** Fails runs that never started or stopped making progress. */
    async failStuckRuns() {
      const now = clock();
      let failed = 0;
      for (const run of await staleRuns(db, now - PENDING_TIMEOUT_MS, now - QUIET_TIMEOUT_MS)) {
        const error =
          run.status === 'pending'
            ? 'the agent never started the run (is it running and checking in?)'
            : 'no progress from the agent for 5 minutes';
        if (await updateRunIf(db, run.id, [run.status], { status: 'failed', error, finished_at: now, updated_at: now }))
          failed += 1;
      }
      return failed;
    },
  };
}

export type BenchmarksService = ReturnType<typeof createBenchmarksService>;
