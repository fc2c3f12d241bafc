import { ageText, LATE_SLACK_MS, ONLINE_WINDOW_MS, type ServerStateName } from '@palisade/protocol';
import type { Database, ServerRow } from '../../db/schema.js';
import { updateServer } from '../../repositories/servers.repository.js';
import type { CallOutcome, CallRecorder } from './proxy.js';

export type StateRow = Pick<ServerRow, 'last_seen' | 'last_call_ok_at' | 'last_call_error_at' | 'last_call_error'>;

export interface ServerState {
  state: ServerStateName;
  /** v1 `online`: the spec's rule, a check-in within two minutes; true exactly when the state is not offline. */
  online: boolean;
  /** Why, in words, counted from `now`. */
  reason: string;
}

/**
 * The one function that decides a server's state (docs/fleet.md, "Server states"): the fleet list,
 * the server page, v1 `online`, the score and the alert rules all read it.
 * - offline: no check-in within two minutes (or never);
 * - late: no check-in for `lateAfter` ms (lateAfterMs(): two of its agent's check-in intervals and a
 *   little slack), but within two minutes: v1 `online` is still true;
 * - unreachable: checking in, but the console's latest call to the agent failed (`last_call_error_at`
 *   is when the failures began; a call the agent answers clears it);
 * - online: otherwise.
 */
export function serverState(row: StateRow, now: number, lateAfter: number): ServerState {
  if (row.last_seen === null) return { state: 'offline', online: false, reason: 'The agent has never checked in' };
  const sinceCheckin = now - row.last_seen;
  if (sinceCheckin >= ONLINE_WINDOW_MS) {
    return { state: 'offline', online: false, reason: `No check-in for ${ageText(sinceCheckin)}` };
  }
  const failing = row.last_call_error_at; // cleared by a call the agent answers (recordCall)
  const calls =
    failing === null
      ? ''
      : `the console's calls to the agent have failed for ${ageText(now - failing)}: ${row.last_call_error ?? 'no answer'}`;
  if (sinceCheckin >= lateAfter) {
    return {
      state: 'late',
      online: true,
      reason:
        `No check-in for ${ageText(sinceCheckin)}; its agent checks in every ${ageText((lateAfter - LATE_SLACK_MS) / 2)}` +
        (calls ? `, and ${calls}` : ''),
    };
  }
  if (failing !== null) {
    return { state: 'unreachable', online: true, reason: `Last check-in ${ageText(sinceCheckin)} ago, but ${calls}` };
  }
  return { state: 'online', online: true, reason: `Last check-in ${ageText(sinceCheckin)} ago` };
}

/** v1 `online` alone: a check-in within two minutes (the spec's rule; late and unreachable servers are online). */
export function isOnline(row: Pick<StateRow, 'last_seen'>, now: number): boolean {
  return row.last_seen !== null && now - row.last_seen < ONLINE_WINDOW_MS;
}

/** A call outcome like the one stored is written again only after this long, so polling does not write on every call. */
const CALL_RECORD_MS = 60_000;

/**
 * Stores what a call to the agent came to, for serverState(): a success clears the failure; a
 * failure keeps the time its streak began. Unchanged outcomes are written at most once a minute.
 */
export function createCallRecorder(db: Database, clock: () => number): CallRecorder {
  return async function recordCall(row: ServerRow, outcome: CallOutcome) {
    const now = clock();
    if (outcome.ok) {
      if (row.last_call_error_at === null && row.last_call_ok_at !== null && now - row.last_call_ok_at < CALL_RECORD_MS)
        return;
      await updateServer(db, row.id, { last_call_ok_at: now, last_call_error_at: null, last_call_error: null });
      Object.assign(row, { last_call_ok_at: now, last_call_error_at: null, last_call_error: null });
      return;
    }
    if (row.last_call_error_at !== null && row.last_call_error === outcome.error) return;
    const since = row.last_call_error_at ?? now;
    await updateServer(db, row.id, { last_call_error_at: since, last_call_error: outcome.error });
    Object.assign(row, { last_call_error_at: since, last_call_error: outcome.error });
  };
}
