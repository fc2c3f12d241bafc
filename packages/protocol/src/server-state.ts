/**
 * The words the console and the dashboard share about a server's state and age, so the fleet list,
 * the server page header and the score notes say the same thing from the same clock
 * (docs/fleet.md, "Server states").
 */

/**
 * online: checked in within two check-in intervals and the agent answers the console; late: no
 * check-in for two intervals (plus LATE_SLACK_MS), but not yet two minutes; unreachable: checking in,
 * but the console's calls to it fail; offline: no check-in for two minutes. v1 `online` is true for
 * online, late and unreachable.
 */
export const SERVER_STATES = ['online', 'late', 'unreachable', 'offline'] as const;
export type ServerStateName = (typeof SERVER_STATES)[number];

/** A server counts as online (v1 `online`) for two minutes after its last check-in. */
export const ONLINE_WINDOW_MS = 120_000;

/** Past two check-in intervals, a check-in this much later still counts as on time (its request's own travel). */
export const LATE_SLACK_MS = 5000;

/**
 * How long after its last check-in a server is late: two missed check-ins of the interval its agent
 * was told (`interval_s` in the check-in answer), plus LATE_SLACK_MS. 30 s → 65 s, 5 s → 15 s.
 */
export function lateAfterMs(intervalS: number): number {
  return 2 * intervalS * 1000 + LATE_SLACK_MS;
}

/** The server score's component weights; they add up to 1000 (docs/score.md). */
export const SCORE_WEIGHTS = {
  cpu: 200,
  memory: 200,
  disk: 150,
  network: 150,
  stability: 150,
  freshness: 150,
} as const;

/** An age in words ("45 s", "3 min", "2 h", "4 days"): the one wording for "… ago" in notes, headers and lists. */
export function ageText(ms: number): string {
  const s = Math.round(Math.max(0, ms) / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86_400)} days`;
}
