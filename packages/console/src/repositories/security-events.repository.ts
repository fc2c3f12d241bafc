import type { Insertable } from 'kysely';
import type { Database, SecurityEventsTable } from '../db/schema.js';
import type { PageRequest } from '../validation.js';
import { keysetPage } from './paging.js';

export async function insertSecurityEvent(db: Database, event: Insertable<SecurityEventsTable>) {
  await db.insertInto('security_events').values(event).execute();
}

/** A page of the team's events (its signing keys') and the person's own, newest first, with how many there are in all. */
export async function listSecurityEvents(db: Database, accountId: number, personId: number, page: PageRequest) {
  const query = db
    .selectFrom('security_events')
    .select(['id', 'kind', 'reason', 'key_last4', 'method', 'path', 'ip', 'created_at'])
    .where((eb) => eb.or([eb('account_id', '=', accountId), eb('person_id', '=', personId)]));
  const { items, next_cursor, total } = await keysetPage(query, { key: 'created_at', id: 'id' }, page, (e) => [
    e.created_at,
    e.id,
  ]);
  return { events: items, next_cursor, total };
}

export async function deleteSecurityEventsBefore(db: Database, before: number) {
  await db.deleteFrom('security_events').where('created_at', '<', before).execute();
}

/** When the person's latest wrong two-factor codes since `since` were entered, newest first, at most `limit`. */
export async function recentTwoFactorFailures(db: Database, personId: number, since: number, limit: number) {
  const rows = await db
    .selectFrom('security_events')
    .select('created_at')
    .where('person_id', '=', personId)
    .where('kind', '=', 'two_factor_failed')
    .where('created_at', '>', since)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => Number(r.created_at));
}
