import type { Insertable, Updateable } from 'kysely';
import type { Database, FleetApplicationsTable, FleetEntriesTable, FleetPoliciesTable } from '../db/schema.js';
import type { PageRequest } from '../validation.js';
import { runCompiled } from './compiled.js';
import { listParameter, oneOf } from './dialect.js';
import { keysetPage } from './paging.js';

// ---- policies ----

export const listPolicies = (db: Database, accountId: number) =>
  db.selectFrom('fleet_policies').selectAll().where('account_id', '=', accountId).orderBy('id').execute();

export const findPolicy = (db: Database, accountId: number, id: number) =>
  db
    .selectFrom('fleet_policies')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();

export async function insertPolicy(db: Database, row: Insertable<FleetPoliciesTable>) {
  const { id } = await db.insertInto('fleet_policies').values(row).returning('id').executeTakeFirstOrThrow();
  return Number(id);
}

export async function updatePolicy(db: Database, id: number, fields: Updateable<FleetPoliciesTable>) {
  await db.updateTable('fleet_policies').set(fields).where('id', '=', id).execute();
}

export async function deletePolicy(db: Database, accountId: number, id: number) {
  const res = await db
    .deleteFrom('fleet_policies')
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(res.numDeletedRows) > 0;
}

// ---- the servers a scope may name ----

/** Each of the account's servers with what a scope selects by. */
export const scopeServers = (db: Database, accountId: number) =>
  db
    .selectFrom('servers')
    .select(['id', 'name', 'tags', 'product_id'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();

// ---- entries ----

/** Inserts an entry in force; null when one for the same account, list and address already is. */
export async function insertEntry(db: Database, row: Insertable<FleetEntriesTable>): Promise<number | null> {
  const inserted = await db
    .insertInto('fleet_entries')
    .values(row)
    .onConflict((oc) => oc.column('active_key').doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted ? Number(inserted.id) : null;
}

export const findEntry = (db: Database, accountId: number, id: number) =>
  db
    .selectFrom('fleet_entries')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('id', '=', id)
    .executeTakeFirst();

export const findActiveEntry = (db: Database, activeKey: string) =>
  db.selectFrom('fleet_entries').selectAll().where('active_key', '=', activeKey).executeTakeFirst();

/** The account's entries in force, of one list or both. */
function activeEntries(db: Database, accountId: number, list?: FleetEntriesTable['list']) {
  const q = db
    .selectFrom('fleet_entries')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('active_key', 'is not', null);
  return list ? q.where('list', '=', list) : q;
}

/** The account's entries in force (of one list, or both), newest first. */
export const listActiveEntries = (db: Database, accountId: number, list?: FleetEntriesTable['list']) =>
  activeEntries(db, accountId, list).orderBy('id', 'desc').execute();

/** One page of the account's entries in force (of one list, or both), newest first, with how many there are. */
export async function listActiveEntriesPage(
  db: Database,
  accountId: number,
  list: FleetEntriesTable['list'] | undefined,
  page: PageRequest,
) {
  return keysetPage(activeEntries(db, accountId, list), { key: 'created_at', id: 'id' }, page, (e) => [
    Number(e.created_at),
    Number(e.id),
  ]);
}

export const entriesOfPolicy = (db: Database, policyId: number) =>
  db
    .selectFrom('fleet_entries')
    .selectAll()
    .where('policy_id', '=', policyId)
    .where('active_key', 'is not', null)
    .execute();

/** A policy's entries in force follow its scope: the servers that hold them are worked out from it. */
export async function setPolicyEntriesScope(
  db: Database,
  policyId: number,
  scope: Pick<FleetEntriesTable, 'scope_kind' | 'scope_tags' | 'scope_product_id'>,
) {
  await db
    .updateTable('fleet_entries')
    .set(scope)
    .where('policy_id', '=', policyId)
    .where('active_key', 'is not', null)
    .execute();
}

/** Entries in force whose time is up: they no longer count (each agent drops them by their ttl). */
export async function retireExpiredEntries(db: Database, now: number) {
  await db
    .updateTable('fleet_entries')
    .set({ active_key: null })
    .where('active_key', 'is not', null)
    .where('expires_at', '<=', now)
    .execute();
}

/** Takes an entry out of force; false when it already was. */
export async function liftEntry(db: Database, id: number, now: number, by: string) {
  const res = await db
    .updateTable('fleet_entries')
    .set({ active_key: null, lifted_at: now, lifted_by: by })
    .where('id', '=', id)
    .where('active_key', 'is not', null)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

// ---- applications: one entry on one server ----

/** Rows per statement when many applications are written at once (well under either dialect's parameter limit). */
const CHUNK = 500;

/** Asks for the entry on these servers (again, when it had been dropped there). */
export const wantPresent = (db: Database, accountId: number, entryId: number, serverIds: number[], now: number) =>
  wantPresentOn(
    db,
    accountId,
    serverIds.map((serverId) => ({ entryId, serverId })),
    now,
  );

/** Asks for each entry on its server, many in one statement. */
export async function wantPresentOn(
  db: Database,
  accountId: number,
  pairs: { entryId: number; serverId: number }[],
  now: number,
) {
  for (let i = 0; i < pairs.length; i += CHUNK) {
    await db
      .insertInto('fleet_applications')
      .values(
        pairs.slice(i, i + CHUNK).map(({ entryId, serverId }) => ({
          entry_id: entryId,
          server_id: serverId,
          account_id: accountId,
          want: 'present' as const,
          force: 0,
          state: 'pending' as const,
          reason: null,
          attempts: 0,
          next_attempt_at: now,
          locked_until: 0,
          applied_at: null,
          preexisting: 0,
          updated_at: now,
        })),
      )
      .onConflict((oc) =>
        oc.columns(['entry_id', 'server_id']).doUpdateSet({
          want: 'present',
          state: 'pending',
          reason: null,
          attempts: 0,
          next_attempt_at: now,
          updated_at: now,
        }),
      )
      .execute();
  }
}

/** Asks one server to drop these entries it got from the fleet (its own stay: the propagator keeps them). */
export async function wantAbsentOn(db: Database, serverId: number, entryIds: number[], now: number) {
  for (let i = 0; i < entryIds.length; i += CHUNK) {
    await db
      .updateTable('fleet_applications')
      .set({
        want: 'absent',
        force: 0,
        state: 'pending',
        reason: null,
        attempts: 0,
        next_attempt_at: now,
        updated_at: now,
      })
      .where('server_id', '=', serverId)
      .where('entry_id', 'in', entryIds.slice(i, i + CHUNK))
      .where('want', '=', 'present')
      .execute();
  }
}

/** Asks these servers (all of the entry's when none are named) to drop the entry. */
export async function wantAbsent(
  db: Database,
  entryId: number,
  now: number,
  opts: { serverIds?: number[]; force: boolean },
) {
  let q = db
    .updateTable('fleet_applications')
    .set({
      want: 'absent',
      force: opts.force ? 1 : 0,
      state: 'pending',
      reason: null,
      attempts: 0,
      next_attempt_at: now,
      updated_at: now,
    })
    .where('entry_id', '=', entryId)
    .where('want', '=', 'present');
  if (opts.serverIds) {
    if (opts.serverIds.length === 0) return;
    q = q.where('server_id', 'in', opts.serverIds);
  }
  await q.execute();
}

/** Asks one server to drop the address even if it had it of its own (lifting it everywhere). */
export async function wantAbsentForced(
  db: Database,
  accountId: number,
  entryId: number,
  serverId: number,
  now: number,
) {
  await db
    .insertInto('fleet_applications')
    .values({
      entry_id: entryId,
      server_id: serverId,
      account_id: accountId,
      want: 'absent',
      force: 1,
      state: 'pending',
      reason: null,
      attempts: 0,
      next_attempt_at: now,
      locked_until: 0,
      applied_at: null,
      preexisting: 1,
      updated_at: now,
    })
    .onConflict((oc) =>
      oc.columns(['entry_id', 'server_id']).doUpdateSet({
        want: 'absent',
        force: 1,
        state: 'pending',
        reason: null,
        attempts: 0,
        next_attempt_at: now,
        updated_at: now,
      }),
    )
    .execute();
}

/** Servers that checked in are tried again at once for everything they missed. */
export async function retryServersNow(db: Database, serverIds: number[], now: number) {
  // Once a turn on the check-in path: compiled once (compiled.ts).
  await runCompiled(
    db,
    'retryServersNow',
    (d, p) =>
      d
        .updateTable('fleet_applications')
        .set({ next_attempt_at: p.now })
        .where(oneOf(d, 'server_id', p.serverIds, 'bigint'))
        .where('state', '=', p.pending)
        .where('next_attempt_at', '>', p.notBefore),
    { now, serverIds: listParameter(db, serverIds), pending: 'pending' as const, notBefore: now },
  );
}

/** Applications waiting for their turn, oldest first, with their entry. */
export const dueApplications = (db: Database, now: number, limit: number) =>
  db
    .selectFrom('fleet_applications as a')
    .innerJoin('fleet_entries as e', 'e.id', 'a.entry_id')
    .select([
      'a.id',
      'a.server_id',
      'a.account_id',
      'a.want',
      'a.force',
      'a.attempts',
      'a.preexisting',
      'e.id as entry_id',
      'e.list',
      'e.address',
      'e.reason',
      'e.policy_id',
      'e.created_by',
      'e.expires_at',
      'e.lifted_by',
    ])
    .where('a.state', '=', 'pending')
    .where('a.next_attempt_at', '<=', now)
    .where('a.locked_until', '<=', now)
    .orderBy('a.next_attempt_at')
    .orderBy('a.id')
    .limit(limit)
    .execute();

/** Claims one application until `until`; false when another process has it (each is applied once). */
export async function claimApplication(db: Database, id: number, now: number, until: number) {
  const res = await db
    .updateTable('fleet_applications')
    .set({ locked_until: until })
    .where('id', '=', id)
    .where('state', '=', 'pending')
    .where('locked_until', '<=', now)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) > 0;
}

/**
 * Stores what applying `want` came to and frees the claim. When the wish changed meanwhile (lifted
 * while being added), only the claim is freed, so the new wish is worked next.
 */
export async function finishApplication(
  db: Database,
  id: number,
  want: FleetApplicationsTable['want'],
  fields: Updateable<FleetApplicationsTable>,
) {
  const res = await db
    .updateTable('fleet_applications')
    .set({ ...fields, locked_until: 0 })
    .where('id', '=', id)
    .where('want', '=', want)
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 0)
    await db.updateTable('fleet_applications').set({ locked_until: 0 }).where('id', '=', id).execute();
}

/** What one server was asked to hold or drop, by entry. */
export const serverApplications = (db: Database, serverId: number) =>
  db
    .selectFrom('fleet_applications')
    .select(['entry_id', 'server_id', 'want'])
    .where('server_id', '=', serverId)
    .execute();

/** Each entry's applications with the server's name. */
export const applicationsOf = (db: Database, entryIds: number[]) =>
  entryIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('fleet_applications as a')
        .innerJoin('servers as s', 's.id', 'a.server_id')
        .select([
          'a.entry_id',
          'a.server_id',
          's.name as server_name',
          'a.want',
          'a.state',
          'a.reason',
          'a.attempts',
          'a.next_attempt_at',
          'a.applied_at',
        ])
        .where('a.entry_id', 'in', entryIds)
        .orderBy('a.server_id')
        .execute();

/** The lifted entries' servers that have not confirmed they dropped them (pending or failed removals). */
export const unfinishedRemovals = (db: Database, entryIds: number[]) =>
  entryIds.length === 0
    ? Promise.resolve([])
    : db
        .selectFrom('fleet_applications as a')
        .innerJoin('servers as s', 's.id', 'a.server_id')
        .innerJoin('fleet_entries as e', 'e.id', 'a.entry_id')
        .select(['a.entry_id', 'e.address', 'a.server_id', 's.name as server_name', 'a.state', 'a.reason'])
        .where('a.entry_id', 'in', entryIds)
        .where('a.want', '=', 'absent')
        .where('a.state', '!=', 'applied')
        .orderBy('a.server_id')
        .orderBy('a.entry_id')
        .execute();

// ---- reported bans: the rate and what was refused ----

export const findBanReport = (db: Database, serverId: number) =>
  db.selectFrom('fleet_ban_reports').selectAll().where('server_id', '=', serverId).executeTakeFirst();

/**
 * Takes up to `wanted` of the server's reported bans for the minute starting at `windowStart`, at
 * most `limit` a minute across every console process (a compare-and-set on the row, tried again
 * when another process changed it meanwhile); answers how many were granted.
 */
export async function takeBanQuota(
  db: Database,
  serverId: number,
  windowStart: number,
  wanted: number,
  limit: number,
): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const row = await findBanReport(db, serverId);
    if (!row) {
      const granted = Math.min(wanted, limit);
      const inserted = await db
        .insertInto('fleet_ban_reports')
        .values({
          server_id: serverId,
          window_start: windowStart,
          window_count: granted,
          refused: '{}',
          refused_total: 0,
          last_refused_at: null,
          last_refused: null,
        })
        .onConflict((oc) => oc.column('server_id').doNothing())
        .returning('server_id')
        .executeTakeFirst();
      if (inserted) return granted;
      continue;
    }
    const sameWindow = Number(row.window_start) === windowStart;
    const used = sameWindow ? Number(row.window_count) : 0;
    const granted = Math.max(0, Math.min(wanted, limit - used));
    if (granted === 0) return 0;
    const res = await db
      .updateTable('fleet_ban_reports')
      .set({ window_start: windowStart, window_count: used + granted })
      .where('server_id', '=', serverId)
      .where('window_start', '=', Number(row.window_start))
      .where('window_count', '=', Number(row.window_count))
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) > 0) return granted;
  }
  return 0;
}

/** Adds refused bans to the server's counts (by reason), with the last one in words. */
export async function addRefusedBans(
  db: Database,
  serverId: number,
  counts: Record<string, number>,
  last: string,
  now: number,
) {
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  if (total === 0) return;
  for (let attempt = 0; attempt < 20; attempt++) {
    const row = await findBanReport(db, serverId);
    if (!row) {
      const inserted = await db
        .insertInto('fleet_ban_reports')
        .values({
          server_id: serverId,
          window_start: 0,
          window_count: 0,
          refused: JSON.stringify(counts),
          refused_total: total,
          last_refused_at: now,
          last_refused: last,
        })
        .onConflict((oc) => oc.column('server_id').doNothing())
        .returning('server_id')
        .executeTakeFirst();
      if (inserted) return;
      continue;
    }
    const merged = JSON.parse(row.refused) as Record<string, number>;
    for (const [k, v] of Object.entries(counts)) merged[k] = (merged[k] ?? 0) + v;
    const res = await db
      .updateTable('fleet_ban_reports')
      .set({
        refused: JSON.stringify(merged),
        refused_total: Number(row.refused_total) + total,
        last_refused_at: now,
        last_refused: last,
      })
      .where('server_id', '=', serverId)
      .where('refused_total', '=', Number(row.refused_total))
      .executeTakeFirst();
    if (Number(res.numUpdatedRows) > 0) return;
  }
}
