import type { Insertable } from 'kysely';
import type { Database, PeopleTable } from '../db/schema.js';
import { deleteTeamAndData } from './accounts.repository.js';

export async function insertPerson(db: Database, person: Insertable<PeopleTable>) {
  return db.insertInto('people').values(person).returningAll().executeTakeFirstOrThrow();
}

export async function findPersonByEmail(db: Database, email: string) {
  return db.selectFrom('people').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findPersonById(db: Database, id: number) {
  return db.selectFrom('people').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countAdmins(db: Database) {
  const row = await db
    .selectFrom('people')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('role', '=', 'admin')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function setPersonDisabled(db: Database, id: number, disabledAt: number | null) {
  await db.updateTable('people').set({ disabled_at: disabledAt }).where('id', '=', id).execute();
}

export async function setPersonPassword(db: Database, id: number, passwordHash: string) {
  await db.updateTable('people').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

/** Sets a new hash only if the stored one is still `expected` (a password change in between wins); true if it did. */
export async function replacePersonPassword(db: Database, id: number, expected: string, passwordHash: string) {
  const result = await db
    .updateTable('people')
    .set({ password_hash: passwordHash })
    .where('id', '=', id)
    .where('password_hash', '=', expected)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The person and every team they are the only member of (with all it owns), in one transaction;
 * answers the id of a team they are the last owner of while it has other members, and then
 * deletes nothing.
 */
export async function deletePersonAndSoleTeams(db: Database, personId: number): Promise<number | null> {
  return db.transaction().execute(async (trx) => {
    const teams = await trx
      .selectFrom('team_members as mine')
      .select([
        'mine.account_id',
        'mine.role',
        (eb) =>
          eb
            .selectFrom('team_members as other')
            .select((o) => o.fn.countAll<number>().as('n'))
            .whereRef('other.account_id', '=', 'mine.account_id')
            .where('other.person_id', '!=', personId)
            .as('others'),
        (eb) =>
          eb
            .selectFrom('team_members as owner')
            .select((o) => o.fn.countAll<number>().as('n'))
            .whereRef('owner.account_id', '=', 'mine.account_id')
            .where('owner.person_id', '!=', personId)
            .where('owner.role', '=', 'owner')
            .as('other_owners'),
      ])
      .where('mine.person_id', '=', personId)
      .execute();
    for (const team of teams)
      if (team.role === 'owner' && Number(team.others) > 0 && Number(team.other_owners) === 0)
        return Number(team.account_id);
    for (const team of teams) if (Number(team.others) === 0) await deleteTeamAndData(trx, Number(team.account_id));
    await trx.deleteFrom('people').where('id', '=', personId).execute();
    return null;
  });
}
