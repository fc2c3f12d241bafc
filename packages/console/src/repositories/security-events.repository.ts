import type { Insertable } from 'kysely';
import type { Database, SecurityEventsTable } from '../db/schema.js';

export async function insertSecurityEvent(db: Database, event: Insertable<SecurityEventsTable>) {
  await db.insertInto('security_events').values(event).execute();
}

export async function listSecurityEvents(db: Database, accountId: number, limit: number) {
  return db
    .selectFrom('security_events')
    .select(['id', 'kind', 'reason', 'key_last4', 'method', 'path', 'ip', 'created_at'])
    .where('account_id', '=', accountId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function deleteSecurityEventsBefore(db: Database, before: number) {
  await db.deleteFrom('security_events').where('created_at', '<', before).execute();
}
