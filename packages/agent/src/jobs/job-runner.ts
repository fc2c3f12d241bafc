/** A job from the console's check-in answer, e.g. a pending benchmark run. */
export interface ConsoleJob {
  kind?: string;
  type?: string;
  id?: string | number;
  [key: string]: unknown;
}

export type JobHandler = (job: ConsoleJob) => Promise<void>;

/** Receives the jobs of each check-in answer. */
export interface JobRunner {
  accept(job: unknown): void;
}

/**
 * Hands each job to the handler of its kind, once per job id (the console repeats a job until it
 * starts). No kinds exist yet; unknown kinds are logged and ignored.
 */
export function createJobRunner(
  handlers: Record<string, JobHandler>,
  log: (level: 'info' | 'warn', message: string) => void,
): JobRunner {
  const seen = new Set<string>();
  return {
    accept(raw) {
      if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
        log('warn', 'check-in: ignoring a job that is not an object');
        return;
      }
      const job = raw as ConsoleJob;
      const kind = String(job.kind ?? job.type ?? '');
      const handler = Object.hasOwn(handlers, kind) ? handlers[kind] : undefined;
      const identity = `${kind}:${job.id ?? JSON.stringify(job)}`;
      if (seen.has(identity)) return;
      if (seen.size > 1000) seen.clear();
      seen.add(identity);
      if (!handler) {
        log('warn', `check-in: ignoring a job of unknown kind "${kind.slice(0, 40)}"`);
        return;
      }
      handler(job).catch((err: Error) => log('warn', `job ${identity} failed: ${err.message}`));
    },
  };
}
