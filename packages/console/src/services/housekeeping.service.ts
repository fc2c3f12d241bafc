import type { Database } from '../db/schema.js';
import {
  acquireLease,
  type JobRound,
  lastRound,
  recordRound,
  releaseLease,
  releaseLeasesOf,
  renewLease,
} from '../repositories/job-leases.repository.js';
import { deleteOidcLoginsBefore } from '../repositories/oidc-logins.repository.js';
import { deleteEndedWindows } from '../repositories/rate-limits.repository.js';
import { deleteExpiredSessions } from '../repositories/sessions.repository.js';
import { deleteExpiredLoginChallenges } from '../repositories/two-factor.repository.js';
import { OIDC_LOGIN_TTL_MS } from './single-sign-on.service.js';

/**
 * How long a lease lasts unless renewed (docs/alerts.md, "Timing"): a round renews it every
 * LEASE_RENEW_MS while it runs, so a process that dies (SIGKILL, power) holds it at most this long.
 */
export const LEASE_MS = 15_000;
export const LEASE_RENEW_MS = 5_000;

/** The periodic upkeep that is not any one feature's: leases for rounds, expired sessions and windows. */
export function createHousekeepingService({ db, clock }: { db: Database; clock: () => number }) {
  return {
    /**
     * Runs one round of `name` only if this process holds its lease in the database, so with several
     * console processes only one does a round at a time; false when another process holds it.
     */
    async underLease(
      name: string,
      holder: string,
      work: () => Promise<unknown>,
      /** Asked once the lease is held: false skips the round (another process has just done it). */
      due: () => Promise<boolean> = async () => true,
    ): Promise<boolean> {
      if (!(await acquireLease(db, name, holder, clock(), LEASE_MS))) return false;
      // Renewed while the round runs; a failed renewal is left to the next one. A round that stalls
      // past the lease may run beside another process's (docs/security.md, "Alert evaluation and outages").
      const renewal = setInterval(() => {
        renewLease(db, name, holder, clock(), LEASE_MS).catch(() => undefined);
      }, LEASE_RENEW_MS);
      renewal.unref();
      try {
        if (!(await due())) return false;
        await work();
      } finally {
        clearInterval(renewal);
        await releaseLease(db, name, holder);
      }
      return true;
    },
    /** Frees whatever leases this process still holds: on stop, after its rounds ended or were abandoned. */
    releaseLeasesOf: (holder: string) => releaseLeasesOf(db, holder),
    lastRound: (name: string) => lastRound(db, name),
    recordRound: (name: string, round: JobRound) => recordRound(db, name, round),
    /** Expired sessions, sign-ins that never got their two-factor code, and single sign-ins left at the provider. */
    async expireSessions() {
      await deleteExpiredSessions(db, clock());
      await deleteExpiredLoginChallenges(db, clock());
      await deleteOidcLoginsBefore(db, clock() - OIDC_LOGIN_TTL_MS);
    },
    expireRateLimitWindows: () => deleteEndedWindows(db, clock()),
  };
}

export type HousekeepingService = ReturnType<typeof createHousekeepingService>;
