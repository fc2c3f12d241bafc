import type { Migration } from 'kysely';
import { type AnyDb, type Dialect, withId } from './helpers.js';

/**
 * Single sign-on with OpenID Connect (docs/teams.md, "Single sign-on"). Only new tables, so the
 * release before keeps serving beside it:
 * - `oidc_logins`: a sign-in on its way to the provider (the SHA-256 of its `state`, the nonce, the
 *   PKCE verifier, where to return), kept in the database so any console process can finish it, and
 *   taken once (deleted by the callback that finishes it);
 * - `person_identities`: which provider account (issuer, subject) is which person.
 */
export function singleSignOn(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .createTable('oidc_logins')
        .addColumn('state_hash', 'text', (c) => c.primaryKey())
        .addColumn('nonce', 'text', (c) => c.notNull())
        .addColumn('code_verifier', 'text', (c) => c.notNull())
        .addColumn('return_to', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('oidc_logins_created').on('oidc_logins').column('created_at').execute();

      await withId(dialect, db.schema.createTable('person_identities'))
        .addColumn('person_id', 'bigint', (c) => c.notNull().references('people.id').onDelete('cascade'))
        .addColumn('issuer', 'text', (c) => c.notNull())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('person_identities_subject', ['issuer', 'subject'])
        .execute();
      await db.schema.createIndex('person_identities_person').on('person_identities').column('person_id').execute();
    },
  };
}
