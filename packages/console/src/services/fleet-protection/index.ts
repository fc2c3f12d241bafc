import {
  type FleetAddress,
  type FleetEntryInput,
  type FleetLift,
  type FleetPolicyInput,
  type FleetScope,
  type FleetServerBans,
  MANUAL_MIN_PREFIX,
  REPORTED_BANS_PER_MINUTE,
} from '@palisade/protocol';
import { contains, type Network, overlaps, readNetwork } from '@palisade/protocol/networks';
import type { ConsoleConfig } from '../../config.js';
import type { AuditLogTable, Database, FleetEntriesTable } from '../../db/schema.js';
import { badRequest, conflict, notFound } from '../../errors.js';
import {
  applicationsOf,
  deletePolicy,
  entriesOfPolicy,
  findBanReport,
  findEntry,
  findPolicy,
  insertEntry,
  insertPolicy,
  liftEntry,
  listActiveEntries,
  listActiveEntriesPage,
  listPolicies,
  retireExpiredEntries,
  retryServersNow,
  scopeServers,
  serverApplications,
  setPolicyEntriesScope,
  unfinishedRemovals,
  updatePolicy,
  wantAbsent,
  wantAbsentForced,
  wantAbsentOn,
  wantPresent,
  wantPresentOn,
} from '../../repositories/fleet.repository.js';
import { findProduct } from '../../repositories/products.repository.js';
import type { PageRequest } from '../../validation.js';
import { requirePermission } from '../accounts.service.js';
import type { AuditService } from '../audit.service.js';
import { createBatchLoader } from '../batch-loader.js';
import { type ServersService, serverTags } from '../servers/index.js';
import { createOwnAddresses } from './own-addresses.js';
import { createPropagator } from './propagation.js';
import { createReportedBans, type NewFleetEntry } from './reported-bans.js';
import { specialUse } from './special-use.js';
import {
  activeKey,
  applicationView,
  type EntryRow,
  entryView,
  inScope,
  parseIp,
  policyView,
  type Scope,
  scopeOf,
  tagsText,
} from './views.js';

/** Who changed something: the session's account, for the audit log. */
export interface FleetActor {
  accountId: number;
  /** The account's permissions: every fleet change needs `control.edit`, as a control write does. */
  permissions: string;
  kind: AuditLogTable['actor_kind'];
  id: number | null;
  label: string;
  ip: string | null;
}

/**
 * Fleet-wide protection (docs/protection.md, "Fleet policies"): policies that carry one server's ban
 * to the others in their scope, the fleet blacklist and whitelist, and the propagation of every
 * entry to each server through the control proxy, retried until the server answers, each once.
 */
/** How long a lift waits for this process's propagation round before it answers what is still held. */
const LIFT_WAIT_MS = 5000;

export function createFleetService({
  db,
  clock,
  servers,
  audit,
  config = { publicUrl: null, host: '' },
}: {
  db: Database;
  clock: () => number;
  servers: ServersService;
  audit: AuditService;
  config?: Pick<ConsoleConfig, 'publicUrl' | 'host'> & Partial<Pick<ConsoleConfig, 'metricsAddr'>>;
}) {
  const own = createOwnAddresses(config);

  /** The console's own address `net` covers, with where the console has it; null when none. */
  async function ownAddressIn(net: Network) {
    return (await own.list()).find((o) => contains(net, o.net)) ?? null;
  }

  /** Servers that checked in within one turn of the event loop are retried with one statement. */
  const retryNow = createBatchLoader(async (serverIds: number[]) => {
    await retryServersNow(db, serverIds, clock());
    return new Map<number, never>();
  });

  /** The account's servers a scope selects. */
  async function targets(accountId: number, scope: Scope) {
    return (await scopeServers(db, accountId))
      .filter((s) => inScope(scope, s))
      .map((s) => ({ id: Number(s.id), name: s.name }));
  }

  /** A product or tag the account does not have is 404, like another account's. */
  async function checkScope(accountId: number, scope: Scope) {
    if (scope.scope === 'product' && !(await findProduct(db, accountId, scope.product_id!))) throw notFound('product');
    if (scope.scope === 'tags') {
      const known = new Set((await scopeServers(db, accountId)).flatMap((s) => serverTags(s.tags)));
      const missing = scope.tags.find((t) => !known.has(t));
      if (missing) throw notFound(`tag "${missing}"`);
    }
  }

  const scopeInput = (input: { scope: FleetScope; tags?: string[]; product_id?: number }): Scope => ({
    scope: input.scope,
    tags: input.scope === 'tags' ? (input.tags ?? []) : [],
    product_id: input.scope === 'product' ? (input.product_id ?? null) : null,
  });

  async function views(rows: EntryRow[]) {
    const apps = await applicationsOf(
      db,
      rows.map((r) => Number(r.id)),
    );
    return rows.map((r) => {
      const own = apps.filter((a) => Number(a.entry_id) === Number(r.id));
      return { entry: entryView(r, own), servers: own.map(applicationView) };
    });
  }

  async function requirePolicy(accountId: number, id: number) {
    const row = await findPolicy(db, accountId, id);
    if (!row) throw notFound('fleet policy');
    return row;
  }

  const logChange = (
    actor: FleetActor,
    action: 'fleet.policy' | 'fleet.entry',
    method: string,
    path: string,
    summary: string,
    status: number,
  ) =>
    audit.fleet({
      accountId: actor.accountId,
      action,
      actor: { kind: actor.kind, id: actor.id, label: actor.label },
      ip: actor.ip,
      method,
      path,
      summary,
      status,
      outcome: 'done',
    });

  /**
   * Makes each server hold the entries in force whose scope includes it (but the one that banned the
   * address first), and asks a server that left an entry's scope to drop what it got from it: the
   * propagator keeps an address the server held of its own. `onlyServer` limits the work to one
   * server (it was added, or its tags changed); without it, every server of the account.
   */
  async function reconcile(accountId: number, entries: EntryRow[], onlyServer?: number) {
    if (entries.length === 0) return;
    const only = (id: number) => onlyServer === undefined || id === onlyServer;
    const all = (await scopeServers(db, accountId)).filter((s) => only(Number(s.id)));
    const apps =
      onlyServer === undefined
        ? await applicationsOf(
            db,
            entries.map((e) => Number(e.id)),
          )
        : await serverApplications(db, onlyServer);
    const present = new Set(
      apps.filter((a) => a.want === 'present').map((a) => `${Number(a.entry_id)}:${Number(a.server_id)}`),
    );
    const add: { entryId: number; serverId: number }[] = [];
    const drop = new Map<number, number[]>();
    for (const entry of entries) {
      const entryId = Number(entry.id);
      const scope = scopeOf(entry);
      for (const s of all) {
        const serverId = Number(s.id);
        const wanted = inScope(scope, s) && serverId !== Number(entry.origin_server_id);
        const held = present.has(`${entryId}:${serverId}`);
        if (wanted && !held) add.push({ entryId, serverId });
        if (!wanted && held) {
          const entryIds = drop.get(serverId) ?? [];
          entryIds.push(entryId);
          drop.set(serverId, entryIds);
        }
      }
    }
    const now = clock();
    await wantPresentOn(db, accountId, add, now);
    for (const [serverId, entryIds] of drop) await wantAbsentOn(db, serverId, entryIds, now);
  }

  /** A policy's new scope: its entries in force take it, and the servers follow. */
  async function reconcilePolicyEntries(accountId: number, policyId: number, scope: Scope) {
    await setPolicyEntriesScope(db, policyId, {
      scope_kind: scope.scope,
      scope_tags: tagsText(scope.tags),
      scope_product_id: scope.product_id,
    });
    await reconcile(accountId, await entriesOfPolicy(db, policyId));
  }

  /** Creates an entry in force and asks each target for it; null when the address already has one. */
  async function createEntry(accountId: number, row: NewFleetEntry, to: number[]): Promise<number | null> {
    const now = clock();
    await retireExpiredEntries(db, now);
    const id = await insertEntry(db, {
      ...row,
      account_id: accountId,
      lifted_at: null,
      lifted_by: null,
      active_key: activeKey(accountId, row.list, row.address),
    });
    if (id === null) return null;
    await wantPresent(db, accountId, id, to, now);
    kick();
    return id;
  }

  /** Why a blacklist entry must never reach an agent (one stored before these checks existed); null when it may. */
  async function neverBlock(address: string): Promise<string | null> {
    const net = readNetwork(address);
    if (!net) return null;
    const special = specialUse(net);
    if (special) return `${net.text} covers ${special} addresses`;
    const mine = await ownAddressIn(net);
    return mine ? `${net.text} covers ${mine.net.text}, the console's own address (${mine.what})` : null;
  }

  const propagator = createPropagator({ db, clock, servers, audit, neverBlock });
  const kick = () => propagator.kick();
  const reported = createReportedBans({ db, clock, audit, ownAddressIn, createEntry, retryNow });

  return {
    // ---- policies ----
    async listPolicies(accountId: number) {
      return (await listPolicies(db, accountId)).map(policyView);
    },

    async createPolicy(actor: FleetActor, input: FleetPolicyInput) {
      requirePermission(actor, 'control.edit');
      const scope = scopeInput(input);
      await checkScope(actor.accountId, scope);
      const now = clock();
      const id = await insertPolicy(db, {
        account_id: actor.accountId,
        name: input.name,
        trigger: input.trigger,
        scope_kind: scope.scope,
        scope_tags: tagsText(scope.tags),
        scope_product_id: scope.product_id,
        duration_s: input.duration_s,
        enabled: input.enabled ? 1 : 0,
        allow_private: input.allow_private ? 1 : 0,
        created_at: now,
        updated_at: now,
      });
      await logChange(
        actor,
        'fleet.policy',
        'POST',
        'fleet/policies',
        `added policy ${id}: ${JSON.stringify(input)}`,
        201,
      );
      return policyView(await requirePolicy(actor.accountId, id));
    },

    async updatePolicy(actor: FleetActor, id: number, input: FleetPolicyInput) {
      await requirePolicy(actor.accountId, id);
      requirePermission(actor, 'control.edit');
      const scope = scopeInput(input);
      await checkScope(actor.accountId, scope);
      await updatePolicy(db, id, {
        name: input.name,
        trigger: input.trigger,
        scope_kind: scope.scope,
        scope_tags: tagsText(scope.tags),
        scope_product_id: scope.product_id,
        duration_s: input.duration_s,
        enabled: input.enabled ? 1 : 0,
        allow_private: input.allow_private ? 1 : 0,
        updated_at: clock(),
      });
      await reconcilePolicyEntries(actor.accountId, id, scope);
      kick();
      await logChange(actor, 'fleet.policy', 'PATCH', `fleet/policies/${id}`, JSON.stringify(input), 200);
      return policyView(await requirePolicy(actor.accountId, id));
    },

    async deletePolicy(actor: FleetActor, id: number) {
      await requirePolicy(actor.accountId, id);
      requirePermission(actor, 'control.edit');
      if (!(await deletePolicy(db, actor.accountId, id))) throw notFound('fleet policy');
      await logChange(actor, 'fleet.policy', 'DELETE', `fleet/policies/${id}`, `removed policy ${id}`, 200);
    },

    // ---- the fleet lists ----
    /** One page of the entries in force, newest first (docs/api.md, "Lists that page"). */
    async listEntries(accountId: number, list: FleetEntriesTable['list'] | undefined, page: PageRequest) {
      await retireExpiredEntries(db, clock());
      const { items, next_cursor, total } = await listActiveEntriesPage(db, accountId, list, page);
      return { entries: (await views(items)).map((v) => v.entry), next_cursor, total };
    },

    /**
     * Adds an entry to the fleet blacklist or whitelist: refused as the agents would refuse it (not
     * an address, every address), and a blacklist entry the fleet whitelist holds is refused, since
     * the whitelist would win on every server anyway.
     */
    async addEntry(actor: FleetActor, input: FleetEntryInput) {
      requirePermission(actor, 'control.edit');
      const net = parseIp(input.ip);
      const bits = MANUAL_MIN_PREFIX[net.family];
      if (net.prefix < bits && input.confirm_wide !== true)
        throw badRequest(
          `ip: ${net.text} is wider than /${bits} (${2n ** BigInt((net.family === 4 ? 32 : 128) - net.prefix)} addresses); send "confirm_wide": true to add it anyway`,
        );
      if (input.list === 'black') {
        const special = specialUse(net);
        if (special) throw badRequest(`ip: ${net.text} covers ${special} addresses, which a fleet list never blocks`);
        const mine = await ownAddressIn(net);
        if (mine)
          throw badRequest(
            `ip: ${net.text} covers ${mine.net.text}, the console's own address (${mine.what}); blocking it would cut servers off from the console`,
          );
      }
      const scope = scopeInput(input);
      await checkScope(actor.accountId, scope);
      const now = clock();
      if (input.list === 'black') {
        const white = (await listActiveEntries(db, actor.accountId, 'white')).find((e) => {
          const other = readNetwork(e.address);
          return other !== null && overlaps(other, net);
        });
        if (white)
          throw conflict(
            `ip: ${net.text} is on the fleet whitelist (${white.address}, entry ${white.id}); the whitelist always wins, so lift that first`,
          );
      }
      const to = (await targets(actor.accountId, scope)).map((s) => s.id);
      const id = await createEntry(
        actor.accountId,
        {
          list: input.list,
          address: net.text,
          reason: input.reason || 'added to the fleet list',
          origin_kind: 'manual',
          origin_server_id: null,
          origin_server_name: null,
          origin_event: null,
          policy_id: null,
          scope_kind: scope.scope,
          scope_tags: tagsText(scope.tags),
          scope_product_id: scope.product_id,
          created_by: actor.label,
          created_at: now,
          expires_at: input.ttl_s ? now + input.ttl_s * 1000 : null,
        },
        to,
      );
      if (id === null) throw conflict(`ip: ${net.text} is already on the fleet ${input.list}list`);
      await logChange(actor, 'fleet.entry', 'POST', 'fleet/entries', JSON.stringify({ ...input, ip: net.text }), 201);
      const row = (await findEntry(db, actor.accountId, id)) as EntryRow;
      return (await views([row]))[0]!.entry;
    },

    /**
     * Lifts one entry from every server that holds it (their own entries for it too), and answers
     * the servers that have not confirmed it yet (FleetLift).
     */
    async liftEntry(actor: FleetActor, id: number) {
      const row = await findEntry(db, actor.accountId, id);
      if (!row) throw notFound('fleet entry');
      requirePermission(actor, 'control.edit');
      const lifted = (await lift(actor, row as EntryRow)) ? 1 : 0;
      const outcome = await liftOutcome([id], lifted);
      return { entry: (await views([(await findEntry(db, actor.accountId, id)) as EntryRow]))[0]!.entry, ...outcome };
    },

    /** Which servers block an address through the fleet, since when, and why. */
    async address(accountId: number, ip: string): Promise<FleetAddress> {
      const net = parseIp(ip);
      await retireExpiredEntries(db, clock());
      const rows = (await listActiveEntries(db, accountId)).filter((e) => {
        const other = readNetwork(e.address);
        return other !== null && overlaps(other, net);
      });
      return {
        ip: net.text,
        entries: (await views(rows)).map(({ entry, servers: s }) => ({ ...entry, servers: s })),
      };
    },

    /** One action to lift an address everywhere: every fleet blacklist entry holding it. */
    async liftAddress(actor: FleetActor, ip: string) {
      requirePermission(actor, 'control.edit');
      const net = parseIp(ip);
      const rows = (await listActiveEntries(db, actor.accountId, 'black')).filter((e) => {
        const other = readNetwork(e.address);
        return other !== null && overlaps(other, net);
      });
      let lifted = 0;
      for (const row of rows) if (await lift(actor, row as EntryRow)) lifted++;
      return liftOutcome(
        rows.map((r) => Number(r.id)),
        lifted,
      );
    },

    /** A server's reported bans: the rate it is held to and what was refused, by reason. */
    async serverBans(accountId: number, serverId: number): Promise<FleetServerBans> {
      await servers.requireServer(accountId, serverId);
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

    // ---- propagation ----

    /**
     * A server was added or its tags changed: it gets the entries in force whose scope now includes
     * it, and drops those it got from a scope it left (keeping its own). Called by the servers
     * service (services/plugins.ts), so every path that adds or changes a server is covered.
     */
    async serverChanged(accountId: number, serverId: number) {
      await retireExpiredEntries(db, clock());
      await reconcile(accountId, (await listActiveEntries(db, accountId)) as EntryRow[], Number(serverId));
      kick();
    },

    /** A check-in arrived, with the bans it reports (reported-bans.ts). */
    checkedIn: reported.checkedIn,

    round: propagator.round,
    kick: propagator.kick,
    settle: propagator.settle,
  };

  /**
   * After a lift: this process's propagation round is given up to LIFT_WAIT_MS to reach the servers,
   * then every server that has not confirmed the removal is answered, with its state and why.
   */
  async function liftOutcome(entryIds: number[], lifted: number): Promise<FleetLift> {
    if (entryIds.length > 0) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        propagator.settle(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, LIFT_WAIT_MS);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    }
    const still = await unfinishedRemovals(db, entryIds);
    return {
      lifted,
      complete: still.length === 0,
      still_held: still.map((a) => ({
        entry_id: Number(a.entry_id),
        address: a.address,
        server_id: Number(a.server_id),
        server_name: a.server_name,
        state: a.state === 'failed' ? 'failed' : 'pending',
        reason: a.reason,
      })),
    };
  }

  async function lift(actor: FleetActor, row: EntryRow): Promise<boolean> {
    const now = clock();
    if (!(await liftEntry(db, Number(row.id), now, actor.label))) return false;
    await wantAbsent(db, Number(row.id), now, { force: true });
    // Lifted everywhere: the first server drops its own ban too.
    if (row.origin_server_id !== null)
      await wantAbsentForced(db, actor.accountId, Number(row.id), Number(row.origin_server_id), now);
    kick();
    await logChange(
      actor,
      'fleet.entry',
      'DELETE',
      `fleet/entries/${row.id}`,
      `lifted ${row.address} (${row.list}list)`,
      200,
    );
    return true;
  }
}

export type FleetService = ReturnType<typeof createFleetService>;
