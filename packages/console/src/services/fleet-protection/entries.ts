import { type FleetAddress, type FleetEntryInput, type FleetLift, MANUAL_MIN_PREFIX } from '@palisade/protocol';
import { type Network, overlaps, readNetwork } from '@palisade/protocol/networks';
import type { Database, FleetEntriesTable } from '../../db/schema.js';
import { badRequest, conflict, notFound } from '../../errors.js';
import {
  applicationsOf,
  findEntry,
  insertEntry,
  liftEntry,
  listActiveEntries,
  listActiveEntriesPage,
  retireExpiredEntries,
  unfinishedRemovals,
  wantAbsent,
  wantAbsentForced,
  wantPresent,
} from '../../repositories/fleet.repository.js';
import type { PageRequest } from '../../validation.js';
import { requirePermission } from '../accounts.service.js';
import type { FleetActor, FleetChangeLog } from './actor.js';
import type { OwnAddresses } from './own-addresses.js';
import type { Propagator } from './propagation.js';
import type { NewFleetEntry } from './reported-bans.js';
import { type Scopes, scopeInput } from './scopes.js';
import { specialUse } from './special-use.js';
import { activeKey, applicationView, type EntryRow, entryView, parseIp, tagsText } from './views.js';

/** How long a lift waits for this process's propagation round before it answers what is still held. */
const LIFT_WAIT_MS = 5000;

/** The account's entries in force on `list` (both lists without one) that overlap `net`. */
async function overlapping(db: Database, accountId: number, net: Network, list?: FleetEntriesTable['list']) {
  return (await listActiveEntries(db, accountId, list)).filter((e) => {
    const other = readNetwork(e.address);
    return other !== null && overlaps(other, net);
  });
}

/**
 * The fleet blacklist and whitelist (docs/protection.md, "Fleet policies"): entries added by hand or
 * by a policy, what each server holds of them, and lifting them everywhere.
 */
export function createFleetEntries(deps: {
  db: Database;
  clock: () => number;
  scopes: Scopes;
  own: OwnAddresses;
  propagator: Pick<Propagator, 'kick' | 'settle'>;
  logChange: FleetChangeLog;
}) {
  const { db, clock, scopes, own, propagator, logChange } = deps;

  async function views(rows: EntryRow[]) {
    const apps = await applicationsOf(
      db,
      rows.map((r) => Number(r.id)),
    );
    return rows.map((r) => {
      const held = apps.filter((a) => Number(a.entry_id) === Number(r.id));
      return { entry: entryView(r, held), servers: held.map(applicationView) };
    });
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
    propagator.kick();
    return id;
  }

  /** Refuses what no fleet list may hold: wider than a manual entry may be, or (blacklist) what must never be blocked. */
  async function refuseUnsafe(input: FleetEntryInput, net: Network) {
    const bits = MANUAL_MIN_PREFIX[net.family];
    if (net.prefix < bits && input.confirm_wide !== true)
      throw badRequest(
        `ip: ${net.text} is wider than /${bits} (${2n ** BigInt((net.family === 4 ? 32 : 128) - net.prefix)} addresses); send "confirm_wide": true to add it anyway`,
      );
    if (input.list !== 'black') return;
    const special = specialUse(net);
    if (special) throw badRequest(`ip: ${net.text} covers ${special} addresses, which a fleet list never blocks`);
    const mine = await own.within(net);
    if (mine)
      throw badRequest(
        `ip: ${net.text} covers ${mine.net.text}, the console's own address (${mine.what}); blocking it would cut servers off from the console`,
      );
  }

  async function lift(actor: FleetActor, row: EntryRow): Promise<boolean> {
    const now = clock();
    if (!(await liftEntry(db, Number(row.id), now, actor.label))) return false;
    await wantAbsent(db, Number(row.id), now, { force: true });
    // Lifted everywhere: the first server drops its own ban too.
    if (row.origin_server_id !== null)
      await wantAbsentForced(db, actor.accountId, Number(row.id), Number(row.origin_server_id), now);
    propagator.kick();
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

  return {
    createEntry,

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
      await refuseUnsafe(input, net);
      const scope = scopeInput(input);
      await scopes.check(actor.accountId, scope);
      const now = clock();
      if (input.list === 'black') {
        const [white] = await overlapping(db, actor.accountId, net, 'white');
        if (white)
          throw conflict(
            `ip: ${net.text} is on the fleet whitelist (${white.address}, entry ${white.id}); the whitelist always wins, so lift that first`,
          );
      }
      const to = (await scopes.targets(actor.accountId, scope)).map((s) => s.id);
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
      const rows = await overlapping(db, accountId, net);
      return {
        ip: net.text,
        entries: (await views(rows)).map(({ entry, servers: s }) => ({ ...entry, servers: s })),
      };
    },

    /** One action to lift an address everywhere: every fleet blacklist entry holding it. */
    async liftAddress(actor: FleetActor, ip: string) {
      requirePermission(actor, 'control.edit');
      const net = parseIp(ip);
      const rows = await overlapping(db, actor.accountId, net, 'black');
      let lifted = 0;
      for (const row of rows) if (await lift(actor, row as EntryRow)) lifted++;
      return liftOutcome(
        rows.map((r) => Number(r.id)),
        lifted,
      );
    },
  };
}
