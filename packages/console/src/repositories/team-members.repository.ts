import type { TeamRole } from '@palisade/protocol';
import { type Insertable, sql } from 'kysely';
import type { Database, TeamMembersTable } from '../db/schema.js';
import type { PageRequest } from '../validation.js';
import { isPostgres } from './dialect.js';
import { keysetPage } from './paging.js';

export async function insertTeamMember(db: Database, member: Insertable<TeamMembersTable>) {
  await db.insertInto('team_members').values(member).execute();
}

/**
 * What a request's actor is made of (services/accounts.service.ts, `actorOf`), beside the person's
 * row: their membership in the team, joined as `team_members` and `accounts`.
 */
export const MEMBER_COLUMNS = [
  'team_members.account_id as team_id',
  'team_members.role as team_role',
  'team_members.granted as team_granted',
  'team_members.revoked as team_revoked',
  'accounts.name as team_name',
  'accounts.require_two_factor as team_requires_two_factor',
] as const;

/** The person's membership in the team, with MEMBER_COLUMNS; undefined when they are not a member. */
export async function findMember(db: Database, teamId: number, personId: number) {
  return db
    .selectFrom('team_members')
    .innerJoin('people', 'people.id', 'team_members.person_id')
    .innerJoin('accounts', 'accounts.id', 'team_members.account_id')
    .selectAll('people')
    .select(MEMBER_COLUMNS)
    .where('team_members.account_id', '=', teamId)
    .where('team_members.person_id', '=', personId)
    .executeTakeFirst();
}

/** The teams a person belongs to, oldest membership first. */
export async function listPersonTeams(db: Database, personId: number) {
  return db
    .selectFrom('team_members')
    .innerJoin('accounts', 'accounts.id', 'team_members.account_id')
    .select(['accounts.id', 'accounts.name', 'team_members.role', 'accounts.created_at', 'accounts.require_two_factor'])
    .where('team_members.person_id', '=', personId)
    .orderBy('team_members.created_at')
    .orderBy('accounts.id')
    .execute();
}

export async function listPersonTeamIds(db: Database, personId: number) {
  const rows = await db.selectFrom('team_members').select('account_id').where('person_id', '=', personId).execute();
  return rows.map((r) => Number(r.account_id));
}

export async function setMemberOverrides(
  db: Database,
  teamId: number,
  personId: number,
  overrides: { granted: string; revoked: string },
) {
  await db
    .updateTable('team_members')
    .set(overrides)
    .where('account_id', '=', teamId)
    .where('person_id', '=', personId)
    .execute();
}

/**
 * Marks the teams the person is the only member of disabled or enabled: their servers' agents and
 * enrolment tokens follow the team (`accounts.disabled_at`), as they followed the account before teams.
 */
export async function setSoleTeamsDisabled(db: Database, personId: number, disabledAt: number | null) {
  await db
    .updateTable('accounts')
    .set({ disabled_at: disabledAt })
    .where('id', 'in', (eb) =>
      eb
        .selectFrom('team_members as mine')
        .select('mine.account_id')
        .where('mine.person_id', '=', personId)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('team_members as other')
                .select('other.person_id')
                .whereRef('other.account_id', '=', 'mine.account_id')
                .where('other.person_id', '!=', personId),
            ),
          ),
        ),
    )
    .execute();
}

/**
 * A team's members with what the list shows of each (docs/teams.md, "Members"): role, two-factor
 * (1 when they meet a team's requirement: a code on, or signing in only through the OpenID
 * provider, as accounts.service.ts `hasSecondFactor` counts it; packages/console/test/team-members.test.ts
 * checks the two agree), and the last time they used the team (a session acting in it, or one of
 * their tokens there); unordered.
 */
const secondFactor = sql<number>`case when ${sql.ref('people.totp_enabled_at')} is not null or ${sql.ref('people.password_hash')} = '' then 1 else 0 end`;

function membersQuery(db: Database, teamId: number) {
  return db
    .selectFrom('team_members')
    .innerJoin('people', 'people.id', 'team_members.person_id')
    .select((eb) => [
      'people.id',
      'people.name',
      'people.email',
      'team_members.role',
      'team_members.created_at',
      secondFactor.as('two_factor'),
      eb
        .selectFrom('sessions')
        .select((s) => s.fn.max('sessions.last_seen_at').as('at'))
        .whereRef('sessions.person_id', '=', 'team_members.person_id')
        .whereRef('sessions.account_id', '=', 'team_members.account_id')
        .as('session_seen_at'),
      eb
        .selectFrom('access_tokens')
        .select((s) => s.fn.max('access_tokens.last_used_at').as('at'))
        .whereRef('access_tokens.person_id', '=', 'team_members.person_id')
        .whereRef('access_tokens.account_id', '=', 'team_members.account_id')
        .as('token_used_at'),
    ])
    .where('team_members.account_id', '=', teamId);
}

/** One member as the list shows them, or undefined. */
export async function findListedMember(db: Database, teamId: number, personId: number) {
  return membersQuery(db, teamId).where('team_members.person_id', '=', personId).executeTakeFirst();
}

/**
 * A page of a team's members, oldest membership first; `q` keeps those whose name or e-mail holds
 * it, in any case (ASCII), taken literally (`%` and `_` are not wildcards); `twoFactor` those who
 * meet a two-factor requirement (true) or do not (false).
 */
export async function pageTeamMembers(
  db: Database,
  teamId: number,
  filter: { q?: string; twoFactor?: boolean },
  page: PageRequest,
) {
  const { q, twoFactor } = filter;
  let query = membersQuery(db, teamId);
  if (twoFactor !== undefined) query = query.where(secondFactor, '=', twoFactor ? 1 : 0);
  if (q) {
    const pattern = `%${q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where(
      sql<boolean>`(lower(${sql.ref('people.name')}) like ${pattern} escape '\\' or lower(${sql.ref('people.email')}) like ${pattern} escape '\\')`,
    );
  }
  return keysetPage(query, { key: 'team_members.created_at', id: 'people.id', order: 'asc' }, page, (r) => [
    Number(r.created_at),
    Number(r.id),
  ]);
}

export async function countOwners(db: Database, teamId: number) {
  const row = await db
    .selectFrom('team_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', teamId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function setMemberRole(db: Database, teamId: number, personId: number, role: TeamRole) {
  await db
    .updateTable('team_members')
    .set({ role })
    .where('account_id', '=', teamId)
    .where('person_id', '=', personId)
    .execute();
}

export async function deleteMember(db: Database, teamId: number, personId: number) {
  await db.deleteFrom('team_members').where('account_id', '=', teamId).where('person_id', '=', personId).execute();
}

/**
 * Holds the team's row until the transaction ends (PostgreSQL): membership changes of one team take
 * turns, so two owners demoting each other at once cannot leave it without one. SQLite runs one
 * write transaction at a time already.
 */
export async function lockTeam(trx: Database, teamId: number) {
  if (isPostgres(trx)) await trx.selectFrom('accounts').select('id').where('id', '=', teamId).forUpdate().execute();
}
