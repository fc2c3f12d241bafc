/**
 * Agent updates from the console, staged in waves, with rollback (docs/fleet.md, "Agent updates").
 *
 * The console offers an update in a check-in answer (`update`); the agent downloads the release
 * from the console's `/install/` files, checks the Ed25519 signature of SHA256SUMS against the key
 * pinned at install time and the artifact's SHA-256, and hands it to the root updater through files
 * in `<state-dir>/update/` (below). The root updater checks it all again, keeps the previous
 * executable, swaps, restarts the agent and waits for it to check in on the new version; if it does
 * not within `health_timeout_s`, or crashes in a loop, it puts the previous executable back by
 * itself. The agent reports each step in its next check-ins (`update` in the request).
 *
 * This file loads nothing (the agent reads it); the console's zod schemas of the same shapes are in
 * agent-update-schemas.ts.
 */

/** What a server goes through in a rollout, as the console shows it. */
export const UPDATE_SERVER_STATES = [
  /** In a wave not started yet. */
  'pending',
  /** Its wave started; the next check-in answer carries the offer. */
  'offered',
  /** The agent took the offer and is downloading and verifying. */
  'downloading',
  /** Verified and handed to the root updater, which swaps and restarts. */
  'applying',
  /** Checked in on the new version. */
  'updated',
  /** The new version did not check in in time, or crashed in a loop: the previous one is back. */
  'rolled_back',
  /** Refused before anything changed (bad signature or sum, no pinned key, runs from source, …). */
  'failed',
  /** Left out: offline when its wave started, or the rollout ended before its wave. */
  'skipped',
] as const;
export type UpdateServerState = (typeof UPDATE_SERVER_STATES)[number];

export const ROLLOUT_STATES = ['running', 'completed', 'failed', 'cancelled'] as const;
export type RolloutState = (typeof ROLLOUT_STATES)[number];

/** Between 30 s and 1 h for a new version to check in before it is rolled back; 10 minutes by default. */
export const UPDATE_HEALTH_TIMEOUT_MIN_S = 30;
export const UPDATE_HEALTH_TIMEOUT_MAX_S = 3600;
export const UPDATE_HEALTH_TIMEOUT_DEFAULT_S = 600;
/** At most this many waves in one rollout. */
export const MAX_ROLLOUT_WAVES = 10;
/** The default waves: one server, then 10 %, then the rest. */
export const DEFAULT_ROLLOUT_WAVES = '1,10%,100%';

/**
 * One wave: a number of servers (`5`) or a share of the rollout's servers (`10%`), counted from
 * the start (cumulative): `1,10%,100%` updates one server, then up to 10 % in all, then the rest.
 */
export type RolloutWave = { count: number } | { percent: number };

/**
 * `"1,10%,100%"` into waves, or an error naming what is wrong. Each wave must reach further than
 * the one before; the last is always `100%` (added when missing).
 */
export function parseRolloutWaves(text: string): { waves: RolloutWave[] } | { error: string } {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => p === ''))
    return { error: 'waves: expected counts or percentages separated by commas, e.g. 1,10%,100%' };
  const waves: RolloutWave[] = [];
  for (const part of parts) {
    const m = /^(\d{1,5})(%?)$/.exec(part);
    if (m === null) return { error: `waves: "${part.slice(0, 20)}" is not a count (5) or a percentage (10%)` };
    const n = Number(m[1]);
    if (m[2] === '%') {
      if (n < 1 || n > 100) return { error: `waves: ${part} is not a percentage from 1% to 100%` };
      waves.push({ percent: n });
    } else {
      if (n < 1) return { error: 'waves: a wave has at least 1 server' };
      waves.push({ count: n });
    }
  }
  const last = waves[waves.length - 1]!;
  if (!('percent' in last && last.percent === 100)) waves.push({ percent: 100 });
  if (waves.length > MAX_ROLLOUT_WAVES) return { error: `waves: at most ${MAX_ROLLOUT_WAVES} waves` };
  return { waves };
}

/** The waves as text again (`1,10%,100%`). */
export const formatRolloutWaves = (waves: RolloutWave[]) =>
  waves.map((w) => ('percent' in w ? `${w.percent}%` : String(w.count))).join(',');

/**
 * How many servers have been offered the update once wave `index` (0-based) started, of `total`:
 * cumulative, each wave at least one more than the one before, never more than `total`.
 */
export function rolloutWaveReach(waves: RolloutWave[], index: number, total: number): number {
  let reach = 0;
  for (let i = 0; i <= index && i < waves.length; i++) {
    const w = waves[i]!;
    const wanted = 'percent' in w ? Math.ceil((w.percent * total) / 100) : w.count;
    reach = Math.min(total, Math.max(reach + 1, wanted));
  }
  return reach;
}

/** The states an agent reports (the console's `pending`, `offered` and `skipped` are its own). */
export const AGENT_UPDATE_REPORT_STATES = ['downloading', 'applying', 'updated', 'rolled_back', 'failed'] as const;
export type AgentUpdateReportState = (typeof AGENT_UPDATE_REPORT_STATES)[number];

/** In the check-in answer: the update this agent should apply now. Paths are on the console's URL. */
export interface UpdateOffer {
  rollout_id: number;
  version: string;
  /** `/install/SHA256SUMS`. */
  sums_path: string;
  /** `/install/SHA256SUMS.sig`. */
  signature_path: string;
  /** `/install/palisade-agent-<v>-linux-x64`, for an agent running as the single executable. */
  exe_path: string;
  /** `/install/palisade-agent-<v>.mjs`, for an agent running as the one-file bundle under Node. */
  mjs_path: string;
  health_timeout_s: number;
}

/** In the check-in request: where this agent is with a rollout; sent until a check-in carrying it is answered 200. */
export interface UpdateReport {
  rollout_id: number;
  version: string;
  state: AgentUpdateReportState;
  /** Why, for `rolled_back` and `failed`: one line, at most 300 characters. */
  reason: string | null;
}

// --- Files between the agent and the root updater, in <state-dir>/update/ ------------------------
// The agent's user writes request.json, the downloaded files and checked-in.json; root writes
// result.json. Root opens nothing there through a link, reads each file with a size cap, and trusts
// nothing in it it has not checked itself (the signature against the key root pinned, the sum).

export const UPDATE_DIR = 'update';
/** `{rollout_id, version, artifact, sha256, health_timeout_s, requested_at}`; the artifact, SHA256SUMS and SHA256SUMS.sig lie beside it. */
export const UPDATE_REQUEST_FILE = 'request.json';
/** `{version, pid, at}`: the agent's first successful check-in after it started, while request.json exists. */
export const UPDATE_CHECKED_IN_FILE = 'checked-in.json';
/** `{rollout_id, version, state: updated|rolled_back|failed, reason, at}`, by root; the agent reports it, then removes it. */
export const UPDATE_RESULT_FILE = 'result.json';

export interface UpdateRequestFile {
  rollout_id: number;
  version: string;
  /** The artifact's file name as in SHA256SUMS (`palisade-agent-<v>-linux-x64` or `palisade-agent-<v>.mjs`). */
  artifact: string;
  sha256: string;
  health_timeout_s: number;
  requested_at: number;
}
export interface UpdateCheckedInFile {
  version: string;
  pid: number;
  at: number;
}
export interface UpdateResultFile {
  rollout_id: number;
  version: string;
  state: 'updated' | 'rolled_back' | 'failed';
  reason: string | null;
  at: number;
}
