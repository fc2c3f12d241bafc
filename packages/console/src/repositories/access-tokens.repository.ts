import type { Database } from '../db/schema.js';
import { runCompiled } from './compiled.js';
import { MEMBER_COLUMNS } from './team-members.repository.js';

const listed = ['id', 'name', 'last4', 'created_at', 'last_used_at'] as const;

export async function insertAccessToken(
  db: Database,
  token: { account_id: number; person_id: number; name: string; token_hash: string; last4: string; created_at: number },
) {
  return db
    .insertInto('access_tokens')
    .values({ ...token, last_used_at: null })
    .returning(listed)
    .executeTakeFirstOrThrow();
}

export async function listAccessTokens(db: Database, accountId: number, personId: number) {
  return db
    .selectFrom('access_tokens')
    .select(listed)
    .where('account_id', '=', accountId)
    .where('person_id', '=', personId)
    .orderBy('id', 'desc')
    .execute();
}

export async function countAccessTokens(db: Database, accountId: number, personId: number) {
  const row = await db
    .selectFrom('access_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('person_id', '=', personId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteAccessToken(db: Database, accountId: number, personId: number, id: number) {
  const result = await db
    .deleteFrom('access_tokens')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The token and its person's membership in the token's team (MEMBER_COLUMNS), when the person is enabled and a member. */
export async function findTokenAccount(db: Database, tokenHash: string) {
  const rows = await runCompiled(
    db,
    'findTokenAccount',
    (d, p) =>
      d
        .selectFrom('access_tokens')
        .innerJoin('people', 'people.id', 'access_tokens.person_id')
        .innerJoin('team_members', (join) =>
          join
            .onRef('team_members.person_id', '=', 'access_tokens.person_id')
            .onRef('team_members.account_id', '=', 'access_tokens.account_id'),
        )
        .innerJoin('accounts', 'accounts.id', 'team_members.account_id')
        .selectAll('people')
        .select(MEMBER_COLUMNS)
        .select(['access_tokens.id as token_id', 'access_tokens.last_used_at'])
        .where('access_tokens.token_hash', '=', p.tokenHash)
        .where('people.disabled_at', 'is', null),
    { tokenHash },
  );
  return rows[0];
}

/** A member's tokens in the team (removed, or their role changed). */
export async function deleteMemberTokens(db: Database, teamId: number, personId: number) {
  await db.deleteFrom('access_tokens').where('account_id', '=', teamId).where('person_id', '=', personId).execute();
}

/**
 * Marks the use of several tokens in one statement, at most once a minute each: a row is only
 * written when its stored time is older.
 */
export async function touchAccessTokens(db: Database, ids: readonly number[], now: number) {
  await db
    .updateTable('access_tokens')
    .set({ last_used_at: now })
    .where('id', 'in', ids)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - 60_000)]))
    .execute();
}
