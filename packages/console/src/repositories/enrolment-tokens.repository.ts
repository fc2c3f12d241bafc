import type { Database, EnrolmentTokenRow } from '../db/schema.js';

export async function insertEnrolmentToken(db: Database, token: Omit<EnrolmentTokenRow, 'id'>) {
  return db.insertInto('enrolment_tokens').values(token).returningAll().executeTakeFirstOrThrow();
}

export async function listEnrolmentTokens(db: Database, accountId: number) {
  return db
    .selectFrom('enrolment_tokens')
    .selectAll()
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .execute();
}

export async function countEnrolmentTokens(db: Database, accountId: number) {
  const row = await db
    .selectFrom('enrolment_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Marks the token revoked (kept, so the list still shows what it added); false when not the account's. */
export async function revokeEnrolmentToken(db: Database, accountId: number, id: number, now: number) {
  const result = await db
    .updateTable('enrolment_tokens')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) > 0) return true;
  const row = await db
    .selectFrom('enrolment_tokens')
    .select('id')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return row !== undefined;
}

/** The token row with its account's state, by hash. */
export async function findEnrolmentToken(db: Database, tokenHash: string) {
  return db
    .selectFrom('enrolment_tokens')
    .innerJoin('accounts', 'accounts.id', 'enrolment_tokens.account_id')
    .selectAll('enrolment_tokens')
    .select(['accounts.disabled_at'])
    .where('enrolment_tokens.token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/**
 * Counts one use, only while the token is still good: the condition and the increment are one
 * statement, so two servers racing for the last use cannot both get it.
 */
export async function useEnrolmentToken(db: Database, id: number, now: number) {
  const result = await db
    .updateTable('enrolment_tokens')
    .set((eb) => ({ uses: eb('uses', '+', 1) }))
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .whereRef('uses', '<', 'max_uses')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
