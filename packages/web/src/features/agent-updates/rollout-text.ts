import {
  parseRolloutWaves,
  rolloutWaveReach,
  UPDATE_HEALTH_TIMEOUT_MAX_S,
  UPDATE_HEALTH_TIMEOUT_MIN_S,
} from '@palisade/protocol/agent-update';

/** Words and checks of the agent-updates page that need no React (tested in test/agent-updates.test.ts). */

/** "1 server", "3 servers". */
export const servers = (n: number) => `${n} ${n === 1 ? 'server' : 'servers'}`;

/** `600` → "10 min", `90` → "1 min 30 s", `30` → "30 s": the health timeout as people read it. */
export function minutesText(seconds: number): string {
  const m = Math.floor(seconds / 60);
  const s = seconds % 60;
  if (m === 0) return `${s} s`;
  return s === 0 ? `${m} min` : `${m} min ${s} s`;
}

export const HEALTH_TIMEOUT_MIN_MINUTES = UPDATE_HEALTH_TIMEOUT_MIN_S / 60;
export const HEALTH_TIMEOUT_MAX_MINUTES = UPDATE_HEALTH_TIMEOUT_MAX_S / 60;

/** The health timeout field, in minutes (0.5 to 60; fractions allowed), as seconds, or the error naming what is expected. */
export function healthTimeoutSeconds(text: string): { seconds: number } | { error: string } {
  const expected = `health timeout: expected minutes from ${HEALTH_TIMEOUT_MIN_MINUTES} to ${HEALTH_TIMEOUT_MAX_MINUTES}`;
  if (!/^\d{1,2}(\.\d{1,2})?$/.test(text.trim())) return { error: expected };
  const seconds = Math.round(Number(text) * 60);
  if (seconds < UPDATE_HEALTH_TIMEOUT_MIN_S || seconds > UPDATE_HEALTH_TIMEOUT_MAX_S) return { error: expected };
  return { seconds };
}

/**
 * How far each wave reaches with `total` servers, counted from the start as the console counts
 * (rolloutWaveReach): "wave 1: 1 server, wave 2: 3, wave 3: 25"; null for waves that do not parse or no servers.
 */
export function reachText(waves: string, total: number): string | null {
  const parsed = parseRolloutWaves(waves);
  if ('error' in parsed || total === 0) return null;
  return parsed.waves
    .map((_, i) => {
      const reach = rolloutWaveReach(parsed.waves, i, total);
      return `wave ${i + 1}: ${i === 0 ? servers(reach) : reach}`;
    })
    .join(', ');
}
