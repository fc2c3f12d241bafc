import type { Insertable } from 'kysely';
import type { Database, TeamInvitationsTable } from '../db/schema.js';

export async function insertInvitation(db: Database, invitation: Insertable<TeamInvitationsTable>) {
  return db.insertInto('team_invitations').values(invitation).returningAll().executeTakeFirstOrThrow();
}

const withInviter = (db: Database) =>
  db
    .selectFrom('team_invitations')
    .innerJoin('accounts', 'accounts.id', 'team_invitations.account_id')
    .leftJoin('people', 'people.id', 'team_invitations.invited_by')
    .selectAll('team_invitations')
    .select([
      'accounts.name as team_name',
      'accounts.require_two_factor as team_requires_two_factor',
      'people.name as inviter_name',
      'people.email as inviter_email',
    ]);

/** The team's invitations still waiting: not used, not revoked, not expired. */
export async function listPendingInvitations(db: Database, teamId: number, now: number) {
  return withInviter(db)
    .where('team_invitations.account_id', '=', teamId)
    .where('team_invitations.used_at', 'is', null)
    .where('team_invitations.revoked_at', 'is', null)
    .where('team_invitations.expires_at', '>', now)
    .orderBy('team_invitations.created_at', 'desc')
    .orderBy('team_invitations.id', 'desc')
    .execute();
}

export async function findInvitationByHash(db: Database, tokenHash: string) {
  return withInviter(db).where('team_invitations.token_hash', '=', tokenHash).executeTakeFirst();
}

/** Marks the team's invitation revoked while it is unused; false when it is not the team's, or was used. */
export async function revokeInvitation(db: Database, teamId: number, id: number, now: number) {
  const result = await db
    .updateTable('team_invitations')
    .set({ revoked_at: now })
    .where('id', '=', id)
    .where('account_id', '=', teamId)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function findTeamInvitation(db: Database, teamId: number, id: number) {
  return db
    .selectFrom('team_invitations')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', teamId)
    .executeTakeFirst();
}

/**
 * Takes the invitation for `personId` in one statement, only while it is unused, unrevoked and
 * unexpired: two accepts at once, on any console process, cannot both take it.
 */
export async function claimInvitation(db: Database, id: number, personId: number, now: number) {
  const result = await db
    .updateTable('team_invitations')
    .set({ used_at: now, used_by: personId })
    .where('id', '=', id)
    .where('used_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Whether a person with this e-mail is a member of the team. */
export async function isMemberByEmail(db: Database, teamId: number, email: string) {
  const row = await db
    .selectFrom('team_members')
    .innerJoin('people', 'people.id', 'team_members.person_id')
    .select('people.id')
    .where('team_members.account_id', '=', teamId)
    .where('people.email', '=', email)
    .executeTakeFirst();
  return row !== undefined;
}
