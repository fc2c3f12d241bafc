import { LEASE_MS } from '../housekeeping.service.js';

/** The lease and the round record of alert evaluation (job_leases, job_rounds). */
export const ALERT_ROUND = 'alert-evaluation';

/**
 * How often each console process looks whether an evaluation round is due: a fifth of the interval,
 * between 0.5 and 3 s, so a survivor notices a dead holder's expired lease within one of these.
 */
export const roundTickMs = (intervalS: number) => Math.min(3000, Math.max(500, Math.round((intervalS * 1000) / 5)));

/**
 * Evaluation is late when no round has finished for one interval plus a lease plus 15 s (45 s at the
 * default 15 s): longer than a holder's death and a takeover can explain (docs/alerts.md, "Timing").
 */
export const lateAfterMs = (intervalS: number) => intervalS * 1000 + LEASE_MS + 15_000;

/** Slack past one check-in interval before a silence that includes the console's own downtime counts. */
export const GRACE_SLACK_MS = 15_000;

/**
 * Since when this console has been watching check-ins without a gap (its start, or the first round
 * after a failed one, such as a database outage), and how long a server silent since before then is
 * given to check in before silence rules judge it (docs/alerts.md, "After a restart or an outage").
 */
export interface SilenceGrace {
  since: number;
  ms: number;
}

/** True while a server's silence reaches back before the watch began and the grace has not run out: it cannot be told yet. */
export function withinGrace(lastSeen: number, now: number, grace: SilenceGrace | undefined): boolean {
  return grace !== undefined && lastSeen < grace.since && now < grace.since + grace.ms;
}
