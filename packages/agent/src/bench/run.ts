import type { AgentDeps } from '../deps.js';
import type { ConsoleJob } from '../jobs/job-runner.js';
import { isWellFormedToken } from '../lib/tokens.js';
import type { Log } from '../log.js';
import { ConsoleRefused, consoleRunLink, type RunLink } from './console-link.js';
import { runSuite } from './suite.js';
import type { BenchSettings } from './types.js';

/** A `benchmark` job of the check-in answer. */
export interface BenchmarkJob {
  run_id: number;
  label: string;
  token: string;
  report_path: string;
}

/** The job's fields, or why it cannot be run. */
export function parseBenchmarkJob(job: ConsoleJob): BenchmarkJob | string {
  const { run_id, label, token, report_path } = job;
  if (typeof run_id !== 'number' || !Number.isInteger(run_id) || run_id < 1) return 'run_id is not a run number';
  if (typeof token !== 'string' || !isWellFormedToken('benchmark', token)) return 'token is not a run token (bmt_…)';
  if (typeof report_path !== 'string' || report_path !== `/api/agent/benchmarks/${run_id}`)
    return 'report_path is not this run’s report address';
  return { run_id, label: typeof label === 'string' ? label.slice(0, 100) : '', token, report_path };
}

/** The console takes at most this many lines per log call, each at most this long. */
export const LOG_LINES_PER_CALL = 500;
export const LOG_LINE_MAX = 2000;

/**
 * Sends the run's log lines to the console in batches, at most one call at a time. A failed call
 * loses its lines (the run goes on); the daemon's log keeps every line.
 */
export function runLogSender(link: Pick<RunLink, 'report'>, warn: (message: string) => void) {
  const queue: string[] = [];
  let sending: Promise<void> = Promise.resolve();
  let warned = false;
  const flush = () => {
    sending = sending.then(async () => {
      while (queue.length > 0) {
        const lines = queue.splice(0, LOG_LINES_PER_CALL);
        try {
          await link.report('log', { lines });
        } catch (err) {
          if (!warned) warn(`could not send benchmark log lines: ${(err as Error).message}`);
          warned = true;
        }
      }
    });
    return sending;
  };
  return {
    push(line: string) {
      queue.push(line.length > LOG_LINE_MAX ? `${line.slice(0, LOG_LINE_MAX - 1)}…` : line);
    },
    flush,
  };
}

export interface RunOptions {
  deps: AgentDeps;
  settings: BenchSettings;
  consoleUrl: string;
  log: Log;
  /** Seams for tests. */
  link?: RunLink;
  suite?: typeof runSuite;
  flushEveryMs?: number;
  retryDelaysMs?: number[];
}

/**
 * One run for the console: `start`, the suite with its log streamed, then `result` (the report,
 * or `{error}` when the suite itself broke). Resolves with how the run ended on this side.
 */
export async function runBenchmarkJob(job: BenchmarkJob, o: RunOptions): Promise<'done' | 'failed' | 'not started'> {
  const link = o.link ?? consoleRunLink(`${o.consoleUrl}${job.report_path}`, job.token);
  const name = `benchmark run ${job.run_id}${job.label ? ` "${job.label}"` : ''}`;
  try {
    try {
      await link.report('start', {});
    } catch (err) {
      o.log('warn', `${name} not started: ${(err as Error).message}`);
      return 'not started';
    }
    o.log('info', `${name} started`);
    const sender = runLogSender(link, (m) => o.log('warn', `${name}: ${m}`));
    const timer = setInterval(() => void sender.flush(), o.flushEveryMs ?? 1000);
    const line = (text: string) => {
      sender.push(text);
      o.log('info', `${name}: ${text}`);
    };
    let body: unknown;
    let outcome: 'done' | 'failed';
    try {
      body = await (o.suite ?? runSuite)({ deps: o.deps, settings: o.settings, network: link, log: line });
      outcome = 'done';
    } catch (err) {
      body = { error: `the benchmark suite failed: ${(err as Error).message}`.slice(0, 2000) };
      outcome = 'failed';
    } finally {
      clearInterval(timer);
    }
    await sender.flush();
    await sendResult(link, body, o.retryDelaysMs ?? [1000, 3000, 9000]);
    o.log(outcome === 'done' ? 'info' : 'warn', `${name} ${outcome === 'done' ? 'finished' : 'failed'}`);
    return outcome;
  } catch (err) {
    o.log('warn', `${name}: the result did not reach the console: ${(err as Error).message}`);
    return 'failed';
  } finally {
    link.close();
  }
}

/** Retries a result the console did not get (no answer, or 5xx); a 4xx refusal is final. */
async function sendResult(link: RunLink, body: unknown, delaysMs: number[]): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await link.report('result', body);
      return;
    } catch (err) {
      const final = err instanceof ConsoleRefused && err.status < 500;
      if (final || attempt >= delaysMs.length) throw err;
      await new Promise((r) => setTimeout(r, delaysMs[attempt]));
    }
  }
}
