import { lateAfterMs } from '@palisade/protocol';
import type { ConsoleConfig, Permission } from '../../config.js';
import type { Actor, Database, ServerRow } from '../../db/schema.js';
import { badRequest } from '../../errors.js';
import type { SecretBox } from '../../secrets.js';
import { requirePermission } from '../accounts.service.js';
import type { Coherence } from '../coherence/index.js';
import type { AgentsService } from './agents.js';
import { dashboardServer } from './views.js';

/** Told when a server was added or what fleet scopes select by (its tags) changed. */
export type ServerChangeListener = (accountId: number, serverId: number) => Promise<void>;

export interface ServersDeps {
  db: Database;
  clock: () => number;
  /** The check-in interval told to agents decides when a server is late (lateAfterMs()). */
  config: Pick<ConsoleConfig, 'checkinIntervalS'>;
  secrets: SecretBox;
  /** Every call to an agent goes through here (agents.ts). */
  agents: AgentsService;
  /** Drops cached v1 answers when an account's servers change; writes here publish (services/coherence/). */
  changes: Pick<Coherence, 'changed' | 'onChange' | 'ready'>;
  /** A server was added or its tags changed: fleet policies follow it (fleet-protection/index.ts, serverChanged). */
  serverChanged: ServerChangeListener;
}

/** Who is asking: the account, with the permissions its control calls are checked against. */
export type Viewer = Pick<Actor, 'id' | 'permissions'>;

/** What the parts of the servers service (enrolment.ts, settings.ts, control.ts, reads.ts) share. */
export interface ServersContext extends ServersDeps {
  /** When a server is late: two missed check-ins of the interval every agent is told (checkins.service.ts). */
  lateAfter: number;
  /** The server for this viewer, then the permission the call needs (a missing server is 404 first). */
  serverFor(viewer: Viewer, id: number, needed?: Permission): Promise<ServerRow>;
  /** The dashboard's view of one server, with its link. */
  serverView(row: ServerRow, now: number): Promise<ReturnType<typeof dashboardServer>>;
}

export function createServersContext(deps: ServersDeps): ServersContext {
  const lateAfter = lateAfterMs(deps.config.checkinIntervalS);
  return {
    ...deps,
    lateAfter,
    async serverFor(viewer, id, needed) {
      const row = await deps.agents.requireServer(viewer.id, id);
      if (needed) requirePermission(viewer, needed);
      return row;
    },
    serverView: async (row, now) => dashboardServer(row, now, lateAfter, await deps.agents.connectionOf(row)),
  };
}

/** An agent that did not pass the connection check, as a 400 naming the field at fault. */
export function agentRefused(check: { error: string }) {
  const error = check.error || 'the agent did not answer';
  return badRequest(error.startsWith('tls_fingerprint: ') ? error : `api_url: ${error}`);
}
