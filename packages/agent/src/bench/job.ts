import type { AgentDeps } from '../deps.js';
import type { JobHandler } from '../jobs/job-runner.js';
import type { Log } from '../log.js';
import type { BenchSettings } from './types.js';

export interface BenchmarkJobOptions {
  deps: AgentDeps;
  log: Log;
  /** The `bench.*` settings in force when a run starts (they follow reloads). */
  settings(): BenchSettings;
  /** The enrolled console's address, or null when not enrolled. */
  consoleUrl(): string | null;
}

/**
 * The check-in job handler of kind `benchmark`. The suite's code is loaded only when the first run
 * arrives, so an idle daemon carries none of it; one run at a time, later jobs are refused with a log line.
 */
export function benchmarkJobHandler(o: BenchmarkJobOptions): JobHandler {
  let active: number | null = null;
  return async (job) => {
    const { parseBenchmarkJob, runBenchmarkJob } = await import('./run.js');
    const parsed = parseBenchmarkJob(job);
    if (typeof parsed === 'string') {
      o.log('warn', `check-in: ignoring a benchmark job: ${parsed}`);
      return;
    }
    const consoleUrl = o.consoleUrl();
    if (!consoleUrl) return;
    if (active !== null) {
      o.log('warn', `benchmark run ${parsed.run_id} not started: run ${active} is still running`);
      return;
    }
    active = parsed.run_id;
    try {
      await runBenchmarkJob(parsed, { deps: o.deps, log: o.log, settings: o.settings(), consoleUrl });
    } finally {
      active = null;
    }
  };
}
