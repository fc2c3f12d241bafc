import type { Database } from '../db/schema.js';
import { outboxBacklog, pingDatabase } from '../repositories/health.repository.js';

/** What load balancers and the metrics page ask of the database (docs/deploy.md). */
export function createHealthService({ db, clock }: { db: Database; clock: () => number }) {
  return {
    /** Resolves when the database answers a trivial query; rejects with its error otherwise. */
    databaseAnswers: () => pingDatabase(db),
    /** Queued notifications and the age of the oldest, in seconds (0 when none waits). */
    async outbox(): Promise<{ queued: number; oldestAgeS: number }> {
      const { queued, oldestCreatedAt } = await outboxBacklog(db);
      return { queued, oldestAgeS: oldestCreatedAt === null ? 0 : Math.max(0, (clock() - oldestCreatedAt) / 1000) };
    },
  };
}

export type HealthService = ReturnType<typeof createHealthService>;
