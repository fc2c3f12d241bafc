import { randomBytes } from 'node:crypto';
import type { Database } from '../db/schema.js';

/**
 * A new team. The identity columns the table kept from before teams (migration 0028) are filled
 * with placeholders no sign-in can match: an address under `.invalid`, no password hash.
 */
export async function insertTeam(db: Database, team: { name: string; created_at: number }) {
  return db
    .insertInto('accounts')
    .values({
      name: team.name,
      email: `team-${randomBytes(12).toString('hex')}@teams.invalid`,
      password_hash: '',
      role: 'user',
      permissions: '[]',
      disabled_at: null,
      created_at: team.created_at,
    })
    .returning(['id', 'name', 'created_at'])
    .executeTakeFirstOrThrow();
}

export async function teamExists(db: Database, id: number) {
  return (await db.selectFrom('accounts').select('id').where('id', '=', id).executeTakeFirst()) !== undefined;
}

/**
 * The team and everything it owns, inside the caller's transaction. Servers and tickets go first
 * (they refer to the team's products without a cascade); the team's row then takes the rest with
 * it through `on delete cascade`: products, memberships, sessions in it, tokens, keys, webhooks,
 * notifications, alerts and security events.
 */
export async function deleteTeamAndData(trx: Database, id: number) {
  await trx.deleteFrom('servers').where('account_id', '=', id).execute();
  await trx.deleteFrom('tickets').where('account_id', '=', id).execute();
  await trx.deleteFrom('enrolment_tokens').where('account_id', '=', id).execute();
  await trx.deleteFrom('accounts').where('id', '=', id).execute();
}

export async function updateTeamSettings(
  db: Database,
  teamId: number,
  settings: { name?: string; require_two_factor?: number },
) {
  return db
    .updateTable('accounts')
    .set(settings)
    .where('id', '=', teamId)
    .returning(['id', 'name', 'require_two_factor'])
    .executeTakeFirstOrThrow();
}

/** The team's servers' names (a team with servers is not deleted). */
export async function teamServerNames(db: Database, teamId: number) {
  const rows = await db.selectFrom('servers').select('name').where('account_id', '=', teamId).orderBy('id').execute();
  return rows.map((r) => r.name);
}
