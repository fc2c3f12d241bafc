import type { ScheduleBody, ScheduleTask } from '@palisade/protocol/control-schemas/standalone';
import { Cron } from 'croner';
import { InputError } from '../lib/net.js';
import type { FeatureContext } from './context.js';
import type { StateFile } from './store.js';

/** The scheduled maintenance tasks and their default cron expressions (null: only on request). */
export const TASKS = {
  autofetch: { cron: '23 */6 * * *', what: 'fetch the enabled blocklist feeds' },
  'baseline-save': { cron: '*/10 * * * *', what: 'save the learned traffic baseline to the state directory' },
  'attack-bans-clear': { cron: null, what: 'lift every ban made by attack detection' },
} as const satisfies Record<ScheduleTask, { cron: string | null; what: string }>;
export type TaskName = ScheduleTask;

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

  set(body: ScheduleBody) {
    const task = body.task;
    const cron = body.cron ? body.cron : null;
    if (cron !== null) {
      try {
        new Cron(cron, { paused: true }).stop();
      } catch (err) {
        throw new InputError(`cron: "${cron.slice(0, 60)}" is not a valid cron expression: ${(err as Error).message}`);
      }
    }
    const s = this.tasks.get(task)!;
    s.cron = cron;
    this.file.write(Object.fromEntries([...this.tasks].map(([t, x]) => [t, x.cron])));
    this.start();
    return this.list();
  }
}
