import { Cron } from 'croner';
import { InputError } from '../lib/net.js';
import type { FeatureContext } from './context.js';
import { objectBody } from './errors.js';
import type { StateFile } from './store.js';

/** The scheduled maintenance tasks and their default cron expressions (null: only on request). */
export const TASKS = {
  autofetch: { cron: '23 */6 * * *', what: 'fetch the enabled blocklist feeds' },
  'baseline-save': { cron: '*/10 * * * *', what: 'save the learned traffic baseline to the state directory' },
  'attack-bans-clear': { cron: null, what: 'lift every ban made by attack detection' },
} as const;
export type TaskName = keyof typeof TASKS;

export type { BlacklistJob } from './attack-response.js';

interface TaskState {
  cron: string | null;
  job: Cron | null;
  last_run_at: number | null;
  last_error: string | null;
}

/**
 * When the maintenance tasks run (schedule.json holds each task's cron expression, null for never).
 * Croner keeps its own timers; `run` does the work, so the features stay where they are.
 */
export class Schedule {
  private file: StateFile<Partial<Record<TaskName, string | null>>>;
  private tasks = new Map<TaskName, TaskState>();

  constructor(
    private readonly ctx: FeatureContext,
    private readonly run: (task: TaskName) => Promise<void> | void,
  ) {
    this.file = ctx.store.json<Partial<Record<TaskName, string | null>>>('schedule.json', {});
    const saved = this.file.read();
    for (const task of Object.keys(TASKS) as TaskName[]) {
      const cron = task in saved ? (saved[task] ?? null) : TASKS[task].cron;
      this.tasks.set(task, { cron, job: null, last_run_at: null, last_error: null });
    }
  }

  /** (Re)starts the cron jobs. */
  start(): void {
    for (const [task, s] of this.tasks) {
      s.job?.stop();
      s.job = s.cron ? new Cron(s.cron, { protect: true }, () => void this.runTask(task)) : null;
    }
  }

  stop(): void {
    for (const s of this.tasks.values()) s.job?.stop();
  }

  private async runTask(task: TaskName) {
    const s = this.tasks.get(task)!;
    s.last_run_at = this.ctx.deps.clock();
    try {
      await this.run(task);
      s.last_error = null;
    } catch (err) {
      s.last_error = (err as Error).message;
    }
  }

  list() {
    return {
      schedule: [...this.tasks].map(([task, s]) => ({
        task,
        what: TASKS[task].what,
        cron: s.cron,
        next_run_at: s.job?.nextRun()?.getTime() ?? null,
        last_run_at: s.last_run_at,
        last_error: s.last_error,
      })),
    };
  }

  set(body: unknown) {
    const o = objectBody(body);
    const task = parseTask(o.task);
    let cron: string | null = null;
    if (o.cron !== null && o.cron !== '' && o.cron !== undefined) {
      if (typeof o.cron !== 'string') throw new InputError('cron: expected a cron expression such as "0 3 * * *"');
      try {
        new Cron(o.cron, { paused: true }).stop();
      } catch (err) {
        throw new InputError(
          `cron: "${o.cron.slice(0, 60)}" is not a valid cron expression: ${(err as Error).message}`,
        );
      }
      cron = o.cron;
    }
    const s = this.tasks.get(task)!;
    s.cron = cron;
    this.file.write(Object.fromEntries([...this.tasks].map(([t, x]) => [t, x.cron])));
    this.start();
    return this.list();
  }
}

function parseTask(raw: unknown): TaskName {
  if (typeof raw !== 'string' || !(raw in TASKS))
    throw new InputError(`task: expected one of ${Object.keys(TASKS).join(', ')}`);
  return raw as TaskName;
}
