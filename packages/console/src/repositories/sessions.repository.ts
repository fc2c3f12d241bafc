import type { Database } from '../db/schema.js';

export async function insertSession(
  db: Database,
  session: { id_hash: string; account_id: number; created_at: number; expires_at: number },
) {
  await db.insertInto('sessions').values(session).execute();
}

/** The live session and its account, or undefined when expired, unknown or the account is disabled. */
export async function findLiveSession(db: Database, idHash: string, now: number) {
  return db
    .selectFrom('sessions')
    .innerJoin('accounts', 'accounts.id', 'sessions.account_id')
    .selectAll('accounts')
    .where('sessions.id_hash', '=', idHash)
    .where('sessions.expires_at', '>', now)
    .where('accounts.disabled_at', 'is', null)
    .executeTakeFirst();
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
