import type { ConsoleConfig } from '../config.js';
import type { Database } from '../db/schema.js';
import { outboxBacklog, pingDatabase } from '../repositories/health.repository.js';
import { lastRound } from '../repositories/job-leases.repository.js';
import { ALERT_ROUND, lateAfterMs } from './alerts/rounds.js';

/** When alerts were last evaluated, by any console process, and whether that is late (docs/alerts.md, "Timing"). */
export interface EvaluationStatus {
  /** When the last round finished (epoch ms), or null before the first. */
  lastRoundAt: number | null;
  /** Seconds since then (or since this process started, before the first round). */
  ageS: number;
  late: boolean;
  intervalS: number;
}

/** What load balancers and the metrics page ask of the database (docs/deploy.md). */
export function createHealthService({
  db,
  clock,
  config,
}: {
  db: Database;
  clock: () => number;
  config: Pick<ConsoleConfig, 'alertIntervalS'>;
}) {
  const startedAt = clock();
  return {
    /** Resolves when the database answers a trivial query; rejects with its error otherwise. */
    databaseAnswers: () => pingDatabase(db),
    /** Queued notifications and the age of the oldest, in seconds (0 when none waits). */
    async outbox(): Promise<{ queued: number; oldestAgeS: number }> {
      const { queued, oldestCreatedAt } = await outboxBacklog(db);
      return { queued, oldestAgeS: oldestCreatedAt === null ? 0 : Math.max(0, (clock() - oldestCreatedAt) / 1000) };
    },
    /** The last alert evaluation round: late when none finished for lateAfterMs() (45 s at the default interval). */
    async evaluation(): Promise<EvaluationStatus> {
      const last = await lastRound(db, ALERT_ROUND);
      const lastRoundAt = last?.finished_at ?? null;
      const age = Math.max(0, clock() - (lastRoundAt ?? startedAt));
      return {
        lastRoundAt,
        ageS: Math.round(age / 100) / 10,
        late: age > lateAfterMs(config.alertIntervalS),
        intervalS: config.alertIntervalS,
      };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
