import type { Insertable } from 'kysely';
import type { Database, SessionsTable } from '../db/schema.js';
import { runCompiled } from './compiled.js';
import { MEMBER_COLUMNS } from './team-members.repository.js';

export async function insertSession(db: Database, session: Insertable<SessionsTable>) {
  await db.insertInto('sessions').values(session).execute();
}

/**
 * The live session's person in the session's own team (team-members.repository.ts,
 * MEMBER_COLUMNS), or undefined when expired, unknown, the person is disabled or no longer a member
 * there. Every dashboard request and every proxied call reads it: compiled once (compiled.ts).
 */
export async function findLiveSession(db: Database, idHash: string, now: number) {
  const rows = await runCompiled(db, 'findLiveSession', (d, p) => liveSession(d, p, 'session'), { idHash, now });
  return rows[0];
}

/** `findLiveSession` acting in the team a request named (X-Palisade-Team): undefined when not a member there either. */
export async function findLiveSessionInTeam(db: Database, idHash: string, now: number, teamId: number) {
  const rows = await runCompiled(db, 'findLiveSessionInTeam', (d, p) => liveSession(d, p, p.teamId), {
    teamId,
    idHash,
    now,
  });
  return rows[0];
}

/** Both lookups: the member row is the session's team's, or the named team's. */
function liveSession(d: Database, p: { idHash: string; now: number }, team: 'session' | number) {
  return d
    .selectFrom('sessions')
    .innerJoin('people', 'people.id', 'sessions.person_id')
    .innerJoin('team_members', (join) => {
      const person = join.onRef('team_members.person_id', '=', 'sessions.person_id');
      return team === 'session'
        ? person.onRef('team_members.account_id', '=', 'sessions.account_id')
        : person.on('team_members.account_id', '=', team);
    })
    .innerJoin('accounts', 'accounts.id', 'team_members.account_id')
    .selectAll('people')
    .select(MEMBER_COLUMNS)
    .select('sessions.last_seen_at as session_seen_at')
    .where('sessions.id_hash', '=', p.idHash)
    .where('sessions.expires_at', '>', p.now)
    .where('people.disabled_at', 'is', null);
}

/** Whether the session is live, whatever team it names (a request naming a team it is not in is 404, not 401). */
export async function isLiveSession(db: Database, idHash: string, now: number) {
  const row = await db
    .selectFrom('sessions')
    .innerJoin('people', 'people.id', 'sessions.person_id')
    .select('sessions.id_hash')
    .where('sessions.id_hash', '=', idHash)
    .where('sessions.expires_at', '>', now)
    .where('people.disabled_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

/** When the session was made (its sign-in); undefined when there is no such session. */
export async function findSessionStartedAt(db: Database, idHash: string): Promise<number | undefined> {
  const row = await db.selectFrom('sessions').select('created_at').where('id_hash', '=', idHash).executeTakeFirst();
  return row === undefined ? undefined : Number(row.created_at);
}

/** The team a session acts in when a request names none. */
export async function setSessionTeam(db: Database, idHash: string, teamId: number) {
  await db.updateTable('sessions').set({ account_id: teamId }).where('id_hash', '=', idHash).execute();
}

/** A member's sessions acting in the team (removed, or their role changed). */
export async function deleteMemberSessions(db: Database, teamId: number, personId: number) {
  await db.deleteFrom('sessions').where('account_id', '=', teamId).where('person_id', '=', personId).execute();
}

export async function deleteSession(db: Database, idHash: string) {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

export async function deletePersonSessions(db: Database, personId: number) {
  await db.deleteFrom('sessions').where('person_id', '=', personId).execute();
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

export async function listPersonSessions(db: Database, personId: number, now: number) {
  return db
    .selectFrom('sessions')
    .select(['id_hash', 'created_at', 'last_seen_at', 'ip', 'user_agent'])
    .where('person_id', '=', personId)
    .where('expires_at', '>', now)
    .orderBy('last_seen_at', 'desc')
    .orderBy('created_at', 'desc')
    .execute();
}

/** One session of this person; false when it is not one (another person's is not found either). */
export async function deletePersonSession(db: Database, personId: number, idHash: string) {
  const result = await db
    .deleteFrom('sessions')
    .where('person_id', '=', personId)
    .where('id_hash', '=', idHash)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Every session of the person but the one kept; how many ended. */
export async function deleteOtherSessions(db: Database, personId: number, keepIdHash: string) {
  const result = await db
    .deleteFrom('sessions')
    .where('person_id', '=', personId)
    .where('id_hash', '!=', keepIdHash)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Sessions acting in a team about to go move to another team of their person; those with none are deleted with it. */
export async function moveSessionsOffTeam(db: Database, teamId: number) {
  await db
    .updateTable('sessions')
    .set((eb) => ({
      account_id: eb
        .selectFrom('team_members')
        .select((m) => m.fn.min('team_members.account_id').as('other'))
        .whereRef('team_members.person_id', '=', 'sessions.person_id')
        .where('team_members.account_id', '!=', teamId),
    }))
    .where('account_id', '=', teamId)
    .where(({ exists, selectFrom }) =>
      exists(
        selectFrom('team_members')
          .select('team_members.person_id')
          .whereRef('team_members.person_id', '=', 'sessions.person_id')
          .where('team_members.account_id', '!=', teamId),
      ),
    )
    .execute();
}
