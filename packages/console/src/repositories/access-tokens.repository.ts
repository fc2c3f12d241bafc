import type { Database } from '../db/schema.js';
import { runCompiled } from './compiled.js';

const listed = ['id', 'name', 'last4', 'created_at', 'last_used_at'] as const;

export async function insertAccessToken(
  db: Database,
  token: { account_id: number; name: string; token_hash: string; last4: string; created_at: number },
) {
  return db
    .insertInto('access_tokens')
    .values({ ...token, last_used_at: null })
    .returning(listed)
    .executeTakeFirstOrThrow();
}

export async function listAccessTokens(db: Database, accountId: number) {
  return db
    .selectFrom('access_tokens')
    .select(listed)
    .where('account_id', '=', accountId)
    .orderBy('id', 'desc')
    .execute();
}

export async function countAccessTokens(db: Database, accountId: number) {
  const row = await db
    .selectFrom('access_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteAccessToken(db: Database, accountId: number, id: number) {
  const result = await db
    .deleteFrom('access_tokens')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The token and its account when the account is enabled. */
export async function findTokenAccount(db: Database, tokenHash: string) {
  const rows = await runCompiled(
    db,
    'findTokenAccount',
    (d, p) =>
      d
        .selectFrom('access_tokens')
        .innerJoin('accounts', 'accounts.id', 'access_tokens.account_id')
        .selectAll('accounts')
        .select(['access_tokens.id as token_id', 'access_tokens.last_used_at'])
        .where('access_tokens.token_hash', '=', p.tokenHash)
        .where('accounts.disabled_at', 'is', null),
    { tokenHash },
  );
  return rows[0];
}

/** Marks use at most once a minute: the row is only written when the stored time is older. */
export async function touchAccessToken(db: Database, id: number, now: number) {
  await db
    .updateTable('access_tokens')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - 60_000)]))
    .execute();
}
