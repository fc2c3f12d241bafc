import { type FleetServerBans, REPORTED_BANS_PER_MINUTE } from '@palisade/protocol';
import type { ConsoleConfig } from '../../config.js';
import type { Database } from '../../db/schema.js';
import {
  findBanReport,
  listActiveEntries,
  retireExpiredEntries,
  retryServersNow,
} from '../../repositories/fleet.repository.js';
import type { AuditService } from '../audit.service.js';
import { createBatchLoader } from '../batch-loader.js';
import type { AgentsService } from '../servers/index.js';
import { fleetChangeLog } from './actor.js';
import { createFleetEntries } from './entries.js';
import { createOwnAddresses } from './own-addresses.js';
import { createFleetPolicies } from './policies.js';
import { createPropagator } from './propagation.js';
import { createReportedBans } from './reported-bans.js';
import { createScopes } from './scopes.js';
import type { EntryRow } from './views.js';

export type { FleetActor } from './actor.js';

export interface FleetDeps {
  db: Database;
  clock: () => number;
  /** The agents' control API (servers/agents.ts): entries reach servers through the console's proxy. */
  agents: Pick<AgentsService, 'requireServer' | 'fleetControl'>;
  audit: AuditService;
  config?: Pick<ConsoleConfig, 'publicUrl' | 'host'> & Partial<Pick<ConsoleConfig, 'metricsAddr'>>;
}

/**
 * Fleet-wide protection (docs/protection.md, "Fleet policies"): policies that carry one server's ban
 * to the others in their scope (policies.ts), the fleet blacklist and whitelist (entries.ts), the
 * bans check-ins report (reported-bans.ts), and the propagation of every entry to each server
 * through the control proxy, retried until the server answers, each once (propagation.ts).
 */
export function createFleetService({ db, clock, agents, audit, config = { publicUrl: null, host: '' } }: FleetDeps) {
  const own = createOwnAddresses(config);
  const scopes = createScopes({ db, clock });
  const logChange = fleetChangeLog(audit);
  const propagator = createPropagator({ db, clock, agents, audit, neverBlock: own.neverBlock });
  const kick = () => propagator.kick();
  const entries = createFleetEntries({ db, clock, scopes, own, propagator, logChange });
  /** Servers that checked in within one turn of the event loop are retried with one statement. */
  const retryNow = createBatchLoader(async (serverIds: number[]) => {
    await retryServersNow(db, serverIds, clock());
    return new Map<number, never>();
  });
  const reported = createReportedBans({
    db,
    clock,
    audit,
    ownAddressIn: own.within,
    createEntry: entries.createEntry,
    retryNow,
  });

  return {
    ...createFleetPolicies({ db, clock, scopes, logChange, kick }),
    listEntries: entries.listEntries,
    addEntry: entries.addEntry,
    liftEntry: entries.liftEntry,
    address: entries.address,
    liftAddress: entries.liftAddress,

    /** A server's reported bans: the rate it is held to and what was refused, by reason. */
    async serverBans(accountId: number, serverId: number): Promise<FleetServerBans> {
      await agents.requireServer(accountId, serverId);
      const row = await findBanReport(db, serverId);
      const windowStart = Math.floor(clock() / 60_000) * 60_000;
      const current = row !== undefined && Number(row.window_start) === windowStart;
      return {
        server_id: serverId,
        limit_per_minute: REPORTED_BANS_PER_MINUTE,
        window_started_at: current ? windowStart : null,
        accepted_in_window: current ? Number(row.window_count) : 0,
        refused_total: row ? Number(row.refused_total) : 0,
        refused: row ? (JSON.parse(row.refused) as FleetServerBans['refused']) : {},
        last_refused_at: row?.last_refused_at == null ? null : Number(row.last_refused_at),
        last_refused: row?.last_refused ?? null,
      };
    },

    /**
     * A server was added or its tags changed: it gets the entries in force whose scope now includes
     * it, and drops those it got from a scope it left (keeping its own). The servers service takes
     * it as a dependency (services/plugins.ts), so every path that adds or changes a server is covered.
     */
    async serverChanged(accountId: number, serverId: number) {
      await retireExpiredEntries(db, clock());
      await scopes.reconcile(accountId, (await listActiveEntries(db, accountId)) as EntryRow[], Number(serverId));
      kick();
    },

    /** A check-in arrived, with the bans it reports (reported-bans.ts); the check-ins service takes it as a dependency. */
    checkedIn: reported.checkedIn,

    round: propagator.round,
    kick: propagator.kick,
    settle: propagator.settle,
  };
}

export type FleetService = ReturnType<typeof createFleetService>;
