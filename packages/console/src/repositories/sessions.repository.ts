import type { Insertable } from 'kysely';
import type { Database, SessionsTable } from '../db/schema.js';
import { runCompiled } from './compiled.js';

export async function insertSession(db: Database, session: Insertable<SessionsTable>) {
  await db.insertInto('sessions').values(session).execute();
}

/** The live session and its account, or undefined when expired, unknown or the account is disabled. */
export async function findLiveSession(db: Database, idHash: string, now: number) {
  // Every dashboard request and every proxied call reads it: compiled once (compiled.ts).
  const rows = await runCompiled(
    db,
    'findLiveSession',
    (d, p) =>
      d
        .selectFrom('sessions')
        .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
        .selectAll('accounts')
        .select('sessions.last_seen_at as session_seen_at')
        .where('sessions.id_hash', '=', p.idHash)
        .where('sessions.expires_at', '>', p.now)
        .where('accounts.disabled_at', 'is', null),
    { idHash, now },
  );
  return rows[0];
}

export async function deleteSession(db: Database, idHash: string) {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

export async function deleteAccountSessions(db: Database, accountId: number) {
  await db.deleteFrom('sessions').where('account_id', '=', accountId).execute();
}

export async function deleteExpiredSessions(db: Database, now: number) {
  await db.deleteFrom('sessions').where('expires_at', '<=', now).execute();
}

/** Records where and when a session was used, at most once a minute (one write, not one per request). */
export async function touchSession(db: Database, idHash: string, now: number, ip: string) {
  await db
    .updateTable('sessions')
    .set({ last_seen_at: now, ip })
    .where('id_hash', '=', idHash)
    .where((eb) => eb.or([eb('last_seen_at', 'is', null), eb('last_seen_at', '<=', now - 60_000)]))
    .execute();
}

export async function listAccountSessions(db: Database, accountId: number, now: number) {
  return db
    .selectFrom('sessions')
    .select(['id_hash', 'created_at', 'last_seen_at', 'ip', 'user_agent'])
    .where('account_id', '=', accountId)
    .where('expires_at', '>', now)
    .orderBy('last_seen_at', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
}

/** One session of this account; false when it is not one (another account's is not found either). */
export async function deleteAccountSession(db: Database, accountId: number, idHash: string) {
  const result = await db
    .deleteFrom('sessions')
    .where('account_id', '=', accountId)
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Every session of the account but the one kept; how many ended. */
export async function deleteOtherSessions(db: Database, accountId: number, keepIdHash: string) {
  const result = await db
    .deleteFrom('sessions')
    .where('account_id', '=', accountId)
    .where('id_hash', '!=', keepIdHash)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
