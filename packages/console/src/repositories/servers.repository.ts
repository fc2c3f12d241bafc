import type { Insertable } from 'kysely';
import type { Database, ServersTable } from '../db/schema.js';

export async function listServers(db: Database, accountId: number) {
  return db.selectFrom('servers').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
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
