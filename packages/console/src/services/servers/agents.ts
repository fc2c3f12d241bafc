import type { ControlPath } from '@palisade/protocol';
import type { WebSocket } from 'ws';
import type { ConsoleConfig } from '../../config.js';
import type { Database, ServerRow } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import type { GuardedClient } from '../../outbound/guarded-client.js';
import { findServer } from '../../repositories/servers.repository.js';
import type { SecretBox } from '../../secrets.js';
import { createAgentClient } from './agent-client.js';
import { createLinkRegistry, type LinkLog, type LinkState, type RelayBus } from './links.js';
import { createAgentProxy, type ProxiedAnswer } from './proxy.js';
import { createCallRecorder } from './state.js';

/**
 * What the link endpoint (routes/agent/link.ts) and the app (app.ts) do with this process's
 * outbound links: take a new one, relay between processes, close them at shutdown. Nothing else.
 */
export interface AgentLinks {
  /**
   * Takes a server's new link (its daemon token checked by the caller; links.ts attach()). Once its
   * agent proved the key, its /health is asked down it at once, so a server the console could not
   * reach directly counts as reachable without waiting for a recheck; `failed` hears if that fails.
   */
  open(server: ServerRow, socket: WebSocket, log: LinkLog, failed: (err: unknown) => void): void;
  /** With several console processes: links are claimed and calls relayed on `bus`; answers the stop. */
  relayThrough(bus: RelayBus, log: LinkLog): () => Promise<void>;
  closeAll(): void;
}

export interface AgentsDeps {
  db: Database;
  clock: () => number;
  config: Pick<ConsoleConfig, 'agentTimeoutMs' | 'linkHeartbeatMs'>;
  outbound: GuardedClient;
  secrets: SecretBox;
}

/**
 * How the console reaches its servers' agents (docs/fleet.md, "Proxies", "Outbound link"): directly
 * at their address or down their outbound link, with every call's outcome stored for the server's
 * state. The servers service and fleet policies call agents only through this.
 */
export function createAgentsService({ db, clock, config, outbound, secrets }: AgentsDeps) {
  const registry = createLinkRegistry(clock, config.linkHeartbeatMs);
  const client = createAgentClient(outbound, config.agentTimeoutMs, clock, registry);
  const recordCall = createCallRecorder(db, clock);
  const proxy = createAgentProxy(client, secrets, recordCall);

  /** One of the account's servers, or 404. */
  async function requireServer(accountId: number, id: number): Promise<ServerRow> {
    const row = await findServer(db, accountId, id);
    if (!row) throw notFound('server');
    return row;
  }

  /** The connection test of a saved server counts as a call to its agent. */
  async function checkSaved(row: ServerRow) {
    const check = await client.check(proxy.targetOf(row));
    await recordCall(
      row,
      'error' in check ? { ok: false, error: check.error || 'the agent did not answer' } : { ok: true },
    );
    return check;
  }

  /**
   * How the server is reached is `servers.connect`, which only its account changes (setConnection);
   * an `outbound` server's link as any process sees it, `down` when it is not up anywhere.
   */
  async function connectionOf(row: ServerRow): Promise<LinkState> {
    if (row.connect === 'direct') return { mode: 'direct', link: null, since: null };
    const seen = await registry.stateAnywhere(row.id);
    return seen.mode === 'direct' ? { mode: 'outbound', link: 'down', since: null } : seen;
  }

  const links: AgentLinks = {
    open(server, socket, log, failed) {
      registry.attach(server.id, server.name, socket, log, {
        keySha256: proxy.keySha256(server),
        verified: () => void checkSaved(server).catch(failed),
      });
    },
    relayThrough: (bus, log) => registry.relayThrough(bus, secrets, log),
    closeAll: () => registry.closeAll(),
  };

  return {
    links,
    requireServer,
    checkSaved,
    connectionOf,
    recordCall,
    /** Calls to saved servers' agents with their stored key (proxy.ts). */
    proxy,
    /** A server address and key not saved yet, checked as the connection test does. */
    check: client.check,
    /** A server's link ends (the server was deleted, switched to direct, or its daemon token replaced). */
    dropLink: (serverId: number) => registry.drop(serverId),

    /**
     * A control call the console makes itself for the account's fleet policies (docs/protection.md,
     * "Fleet policies"), through the same proxy as a user's: no viewer, so no permission check; the
     * server must be the account's.
     */
    async fleetControl(
      accountId: number,
      id: number,
      method: string,
      path: ControlPath,
      body: Buffer | undefined,
    ): Promise<ProxiedAnswer> {
      return proxy.control(await requireServer(accountId, id), method, path, body, '');
    },
  };
}

export type AgentsService = ReturnType<typeof createAgentsService>;
