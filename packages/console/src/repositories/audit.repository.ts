import type { Insertable } from 'kysely';
import type { AuditLogTable, Database } from '../db/schema.js';
import type { PageRequest } from '../validation.js';
import { keysetPage } from './paging.js';

export async function insertAuditEntry(db: Database, entry: Insertable<AuditLogTable>) {
  await db.insertInto('audit_log').values(entry).execute();
}

/** A page of an account's entries, newest first, with how many there are in all. */
export async function listAuditEntries(db: Database, accountId: number, page: PageRequest) {
  const query = db.selectFrom('audit_log').selectAll().where('account_id', '=', accountId);
  return keysetPage(query, { key: 'at', id: 'id' }, page, (e) => [Number(e.at), Number(e.id)]);
}

export async function deleteAuditEntriesBefore(db: Database, before: number) {
  await db.deleteFrom('audit_log').where('at', '<', before).execute();
}
