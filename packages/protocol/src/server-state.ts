/**
 * The words the console and the dashboard share about a server's state and age, so the fleet list,
 * the server page header and the score notes say the same thing from the same clock
 * (docs/fleet.md, "Server states").
 */

/** online: checked in within two minutes and the agent answers the console; unreachable: checked in, but the console's calls to it fail; offline: no check-in for two minutes. */
export const SERVER_STATES = ['online', 'unreachable', 'offline'] as const;
export type ServerStateName = (typeof SERVER_STATES)[number];

/** A server counts as online (v1 `online`) for two minutes after its last check-in. */
export const ONLINE_WINDOW_MS = 120_000;

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
