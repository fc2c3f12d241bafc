import type { Insertable, Updateable } from 'kysely';
import type { AgentRolloutServersTable, AgentRolloutsTable, Database } from '../db/schema.js';
import { runCompiled } from './compiled.js';
import { listParameter, oneOf } from './dialect.js';

type ServerState = AgentRolloutServersTable['state'];

/** The account's running rollout, if any: the check-in path's one lookup (the partial unique index agent_rollouts_running). */
export async function findRunningRollout(db: Database, accountId: number) {
  return db
    .selectFrom('agent_rollouts')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('state', '=', 'running')
    .executeTakeFirst();
}

/**
 * The running rollout of each of these accounts that has one: the check-in path's read, batched
 * over the check-ins of one turn (services/batch-loader.ts), on the partial index agent_rollouts_running.
 */
export async function findRunningRollouts(db: Database, accountIds: number[]) {
  const rows = await runCompiled(
    db,
    'findRunningRollouts',
    (d, p) =>
      d
        .selectFrom('agent_rollouts')
        .selectAll()
        .where(oneOf(d, 'account_id', p.accountIds, 'bigint'))
        .where('state', '=', p.running),
    { accountIds: listParameter(db, accountIds), running: 'running' as const },
  );
  return new Map(rows.map((r) => [Number(r.account_id), r]));
}

/** Every running rollout of every account (the periodic advance). */
export async function listRunningRollouts(db: Database) {
  return db.selectFrom('agent_rollouts').selectAll().where('state', '=', 'running').orderBy('id').execute();
}

/** One of the account's rollouts; another account's is indistinguishable from a missing one. */
export async function findRollout(db: Database, accountId: number, id: number) {
  return db
    .selectFrom('agent_rollouts')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

/** The account's newest rollouts. */
export async function listRollouts(db: Database, accountId: number, limit: number) {
  return db
    .selectFrom('agent_rollouts')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function insertRollout(db: Database, rollout: Insertable<AgentRolloutsTable>) {
  return db.insertInto('agent_rollouts').values(rollout).returningAll().executeTakeFirstOrThrow();
}

/** Rows of a rollout's servers, a few hundred to a statement (SQLite's limit on parameters). */
export async function insertRolloutServers(db: Database, rows: Insertable<AgentRolloutServersTable>[]) {
  for (let start = 0; start < rows.length; start += 100) {
    await db
      .insertInto('agent_rollout_servers')
      .values(rows.slice(start, start + 100))
      .execute();
  }
}

/** Moves a running rollout from wave `from` to `to`; false when another process (or a cancel) got there first. */
export async function moveRolloutWave(db: Database, id: number, from: number, to: number) {
  const result = await db
    .updateTable('agent_rollouts')
    .set({ current_wave: to })
    .where('id', '=', id)
    .where('state', '=', 'running')
    .where('current_wave', '=', from)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Ends a running rollout; false when it had ended already (another process, a cancel). */
export async function finishRollout(
  db: Database,
  id: number,
  fields: { state: 'completed' | 'failed' | 'cancelled'; reason: string | null; finished_at: number },
) {
  const result = await db
    .updateTable('agent_rollouts')
    .set(fields)
    .where('id', '=', id)
    .where('state', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A rollout's servers with their names and last check-in, by wave and id. */
export async function listRolloutServers(db: Database, rolloutId: number) {
  return db
    .selectFrom('agent_rollout_servers as r')
    .innerJoin('servers as s', 's.id', 'r.server_id')
    .select([
      'r.server_id',
      'r.wave',
      'r.state',
      'r.from_version',
      'r.reason',
      'r.offered_at',
      'r.updated_at',
      's.name',
      's.agent_version',
      's.last_seen',
    ])
    .where('r.rollout_id', '=', rolloutId)
    .orderBy('r.wave')
    .orderBy('r.server_id')
    .execute();
}

/** One server's row in a rollout. */
export async function findRolloutServer(db: Database, rolloutId: number, serverId: number) {
  return db
    .selectFrom('agent_rollout_servers')
    .selectAll()
    .where('rollout_id', '=', rolloutId)
    .where('server_id', '=', serverId)
    .executeTakeFirst();
}

/**
 * Moves servers of a rollout on from one of `from` only (compare-and-set), the named ones 500 to a
 * statement (a wave may hold thousands); how many moved.
 */
export async function setRolloutServers(
  db: Database,
  rolloutId: number,
  filter: { serverIds?: number[]; from: ServerState[] },
  fields: Updateable<AgentRolloutServersTable>,
) {
  const update = (serverIds: number[] | undefined) => {
    let query = db
      .updateTable('agent_rollout_servers')
      .set(fields)
      .where('rollout_id', '=', rolloutId)
      .where('state', 'in', filter.from);
    if (serverIds) query = query.where(oneOf(db, 'server_id', listParameter(db, serverIds), 'bigint'));
    return query.executeTakeFirst();
  };
  if (!filter.serverIds) return Number((await update(undefined)).numUpdatedRows);
  let moved = 0;
  for (let start = 0; start < filter.serverIds.length; start += 500) {
    moved += Number((await update(filter.serverIds.slice(start, start + 500))).numUpdatedRows);
  }
  return moved;
}

/** How many servers of a rollout's wave are not yet updated or skipped (the index agent_rollout_servers_wave). */
export async function countOpenInWave(db: Database, rolloutId: number, wave: number) {
  const row = await db
    .selectFrom('agent_rollout_servers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('rollout_id', '=', rolloutId)
    .where('wave', '=', wave)
    .where('state', 'not in', ['updated', 'skipped'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Servers per state, for each of these rollouts. */
export async function countRolloutServers(db: Database, rolloutIds: number[]) {
  if (rolloutIds.length === 0) return [];
  return db
    .selectFrom('agent_rollout_servers')
    .select(['rollout_id', 'state', (eb) => eb.fn.countAll<number>().as('n')])
    .where('rollout_id', 'in', rolloutIds)
    .groupBy(['rollout_id', 'state'])
    .execute();
}

/** The account's servers as a rollout chooses among them: version, last check-in, tags. */
export async function rolloutCandidates(db: Database, accountId: number) {
  return db
    .selectFrom('servers')
    .select(['id', 'name', 'agent_version', 'last_seen', 'tags'])
    .where('account_id', '=', accountId)
    .orderBy('id')
    .execute();
}

/** How many of the account's servers last checked in with another version than `version`. */
export async function countOutdatedServers(db: Database, accountId: number, version: string) {
  const row = await db
    .selectFrom('servers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('agent_version', 'is not', null)
    .where('agent_version', '!=', version)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The account's confirmed alert channels: an agent update that fails is sent to each (docs/fleet.md). */
export async function confirmedChannels(db: Database, accountId: number) {
  return db
    .selectFrom('alert_channels')
    .select(['id', 'kind'])
    .where('account_id', '=', accountId)
    .where('confirmed_at', 'is not', null)
    .orderBy('id')
    .execute();
}
