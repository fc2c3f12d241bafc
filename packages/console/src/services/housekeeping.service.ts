import type { Database } from '../db/schema.js';
import { acquireLease, releaseLease } from '../repositories/job-leases.repository.js';
import { deleteEndedWindows } from '../repositories/rate-limits.repository.js';
import { deleteExpiredSessions } from '../repositories/sessions.repository.js';
import { deleteExpiredLoginChallenges } from '../repositories/two-factor.repository.js';

/** How long one round may hold its lease before another process may take it over. */
const LEASE_MS = 10 * 60_000;

/** The periodic upkeep that is not any one feature's: leases for rounds, expired sessions and windows. */
export function createHousekeepingService({ db, clock }: { db: Database; clock: () => number }) {
  return {
    /**
     * Runs one round of `name` only if this process holds its lease in the database, so with several
     * console processes only one does a round at a time; false when another process holds it.
     */
    async underLease(name: string, holder: string, work: () => Promise<unknown>): Promise<boolean> {
      if (!(await acquireLease(db, name, holder, clock(), LEASE_MS))) return false;
      try {
        await work();
      } finally {
        await releaseLease(db, name, holder);
      }
      return true;
    },
    /** Expired sessions, and sign-ins that never got their two-factor code. */
    async expireSessions() {
      await deleteExpiredSessions(db, clock());
      await deleteExpiredLoginChallenges(db, clock());
    },
    expireRateLimitWindows: () => deleteEndedWindows(db, clock()),
  };
}

export type HousekeepingService = ReturnType<typeof createHousekeepingService>;
