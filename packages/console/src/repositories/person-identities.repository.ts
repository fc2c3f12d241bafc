import type { Database } from '../db/schema.js';

/** The person a provider's account (issuer, subject) is linked to. */
export async function findIdentityPerson(db: Database, issuer: string, subject: string) {
  return db
    .selectFrom('person_identities')
    .innerJoin('people', 'people.id', 'person_identities.person_id')
    .selectAll('people')
    .where('person_identities.issuer', '=', issuer)
    .where('person_identities.subject', '=', subject)
    .executeTakeFirst();
}

export async function insertPersonIdentity(
  db: Database,
  identity: { person_id: number; issuer: string; subject: string; created_at: number },
) {
  await db.insertInto('person_identities').values(identity).execute();
}
