import type { Insertable, Updateable } from 'kysely';
import type { Database, ServersTable } from '../db/schema.js';
import { runCompiled } from './compiled.js';

/** The columns a server list needs, and no more: lists are the hottest read. */
export async function listServerSummaries(db: Database, accountId: number) {
  return runCompiled(
    db,
    'listServerSummaries',
    (d) =>
      d
        .selectFrom('servers')
        .select([
          'id',
          'name',
          'hostname',
          'last_seen',
          'public_ip',
          'score_base_total',
          'attacks_active',
          'last_call_ok_at',
          'last_call_error_at',
          'last_call_error',
          'tags',
        ])
        .where('account_id', '=', 0)
        .orderBy('id'),
    [accountId],
  );
}

/** One of the account's servers; another account's server is indistinguishable from a missing one. */
export async function findServer(db: Database, accountId: number, id: number) {
  return db
    .selectFrom('servers')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function insertServer(db: Database, server: Insertable<ServersTable>) {
  return db.insertInto('servers').values(server).returningAll().executeTakeFirstOrThrow();
}

export async function updateServer(db: Database, id: number, fields: Updateable<ServersTable>) {
  await db.updateTable('servers').set(fields).where('id', '=', id).execute();
}

export async function deleteServer(db: Database, accountId: number, id: number) {
  const result = await db
    .deleteFrom('servers')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function countProductServers(db: Database, productId: number) {
  const row = await db
    .selectFrom('servers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('product_id', '=', productId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The facts the agent last reported for a server (JSON text), to check a benchmark report against. */
export async function serverFactsText(db: Database, id: number): Promise<string> {
  const row = await db.selectFrom('servers').select('facts').where('id', '=', id).executeTakeFirstOrThrow();
  return row.facts;
}

export async function findServerByDaemonToken(db: Database, tokenHash: string) {
  return db
    .selectFrom('servers')
    .innerJoin('accounts', 'accounts.id', 'servers.account_id')
    .selectAll('servers')
    .where('servers.daemon_token_hash', '=', tokenHash)
    .where('accounts.disabled_at', 'is', null)
    .executeTakeFirst();
}

/** Servers of any account that checked in since `since` and whose latest call from the console failed. */
export async function listServersWithFailingCalls(db: Database, since: number, limit: number) {
  return db
    .selectFrom('servers')
    .selectAll()
    .where('last_call_error_at', 'is not', null)
    .where('last_seen', '>=', since)
    .orderBy('last_call_error_at')
    .limit(limit)
    .execute();
}

/** Each of an account's servers with its newest sample (JSON), for the fleet's "now" columns. */
export async function latestSamples(db: Database, accountId: number) {
  return db
    .selectFrom('servers')
    .select(['id', 'latest_sample', 'last_seen'])
    .where('account_id', '=', accountId)
    .execute();
}

/** Whose a server is and its name, whichever account asks (for the audit log, which files it under its owner). */
export async function findServerOwner(db: Database, id: number) {
  return db.selectFrom('servers').select(['id', 'account_id', 'name']).where('id', '=', id).executeTakeFirst();
}
