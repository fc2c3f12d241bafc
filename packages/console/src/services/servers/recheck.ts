import { ONLINE_WINDOW_MS } from '@palisade/protocol';
import type { Database, ServerRow } from '../../db/schema.js';
import { listServersToRecheck } from '../../repositories/servers.repository.js';
import type { ConnectionCheck } from './agent-client.js';
import type { LinkState } from './links.js';
import type { CallRecorder } from './proxy.js';

/** How often the console looks at the servers it can reach, without waiting for a viewer (server.ts). */
export const RECHECK_INTERVAL_MS = 15_000;
/** At most this many servers are looked at per round, this many at a time: the ones not heard from longest first. */
export const RECHECK_BATCH = 100;
const RECHECK_PARALLEL = 20;

/** What an outbound server whose link is up nowhere is recorded as: a call would fail the same way (agent-client.ts). */
export const LINK_DOWN_ERROR = 'the outbound link is down';

/**
 * The console's own look at the servers checking in (docs/fleet.md, "Server states"), so a server
 * the console cannot reach turns unreachable, and one it reaches again online, without anyone
 * opening its page:
 * - `direct` servers: a light `/health` probe at their address (checkSaved: a refused connection,
 *   a timeout or a wrong key is a failed call, an answer clears the failure);
 * - `outbound` servers: the link's state anywhere (links.ts). A link up nowhere is a failed call
 *   ("the outbound link is down"); an up link clears it once `/health` answers down it.
 * Servers whose agent answered longest ago come first, RECHECK_BATCH per round, so a large fleet is
 * gone through in turns (an answer is stored at most once a minute: state.ts).
 */
export function createRecheck(deps: {
  db: Database;
  clock: () => number;
  recordCall: CallRecorder;
  checkSaved: (row: ServerRow) => Promise<ConnectionCheck>;
  connectionOf: (row: ServerRow) => Promise<LinkState>;
}) {
  const { db, clock, recordCall, checkSaved, connectionOf } = deps;

  /** Whether the console reaches the server's agent now (and the outcome is stored). */
  async function recheck(row: ServerRow): Promise<boolean> {
    if (row.connect === 'direct') return !('error' in (await checkSaved(row)));
    const link = await connectionOf(row);
    if (link.link !== 'up') {
      await recordCall(row, { ok: false, error: LINK_DOWN_ERROR });
      return false;
    }
    // An up link has proved the agent's key (links.ts); a server failing before is asked down it.
    if (row.last_call_error_at === null) {
      await recordCall(row, { ok: true });
      return true;
    }
    return !('error' in (await checkSaved(row)));
  }

  return async function recheckRound() {
    const rows = await listServersToRecheck(db, clock() - ONLINE_WINDOW_MS, RECHECK_BATCH);
    let answered = 0;
    for (let i = 0; i < rows.length; i += RECHECK_PARALLEL) {
      const outcomes = await Promise.all(rows.slice(i, i + RECHECK_PARALLEL).map(recheck));
      answered += outcomes.filter(Boolean).length;
    }
    return { checked: rows.length, answered };
  };
}
