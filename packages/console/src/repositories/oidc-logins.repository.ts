import type { Insertable } from 'kysely';
import type { Database, OidcLoginsTable } from '../db/schema.js';

export async function insertOidcLogin(db: Database, login: Insertable<OidcLoginsTable>) {
  await db.insertInto('oidc_logins').values(login).execute();
}

/**
 * Takes the waiting sign-in for this state: deleted and answered in one statement, so of two
 * callbacks with the same state (on any console process) one gets it and the other nothing.
 */
export async function takeOidcLogin(db: Database, stateHash: string) {
  return db.deleteFrom('oidc_logins').where('state_hash', '=', stateHash).returningAll().executeTakeFirst();
}

export async function deleteOidcLoginsBefore(db: Database, before: number) {
  await db.deleteFrom('oidc_logins').where('created_at', '<', before).execute();
}
