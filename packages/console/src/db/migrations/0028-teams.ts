import { type Migration, sql } from 'kysely';
import type { AnyDb, Dialect } from './helpers.js';

/** The `control.*` permissions an owner's role grants (packages/protocol/src/roles.ts, at the time of this migration). */
const OWNER_CONTROL = ['control.edit', 'control.read'];

/**
 * Teams (docs/teams.md): the `accounts` table becomes the team, which keeps owning every row that
 * has an `account_id`; the person who signs in moves to `people`, with the same id as the account
 * they came from, and becomes the team's owner in `team_members`. Sessions carry the person and the
 * team they act in; recovery codes and waiting sign-ins are the person's; tokens and signing keys
 * belong to a person in one team; invitations to a team are kept in `team_invitations`. The
 * identity columns left in `accounts` are no longer read (docs/decisions.md, "Teams"). Each
 * migrated owner keeps exactly the `control.*` permissions the account had: what the owner role
 * would add is stored as a per-member override.
 */
export function teams(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      // The id is given by the migration (the account's), so PostgreSQL takes it "by default".
      const people = db.schema.createTable('people');
      await (dialect === 'sqlite'
        ? people.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        : people.addColumn('id', 'bigint', (c) => c.primaryKey().generatedByDefaultAsIdentity())
      )
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text', (c) => c.notNull())
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('disabled_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('totp_secret_enc', 'text')
        .addColumn('totp_pending_enc', 'text')
        .addColumn('totp_enabled_at', 'bigint')
        .addColumn('totp_last_step', 'bigint')
        .execute();
      await sql`INSERT INTO people (id, email, name, password_hash, role, disabled_at, created_at,
          totp_secret_enc, totp_pending_enc, totp_enabled_at, totp_last_step)
        SELECT id, email, name, password_hash, role, disabled_at, created_at,
          totp_secret_enc, totp_pending_enc, totp_enabled_at, totp_last_step FROM accounts`.execute(db);
      if (dialect === 'postgres')
        await sql`SELECT setval(pg_get_serial_sequence('people', 'id'), GREATEST((SELECT MAX(id) FROM people), 1),
          (SELECT MAX(id) FROM people) IS NOT NULL)`.execute(db);

      await db.schema
        .createTable('team_members')
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('person_id', 'bigint', (c) => c.notNull().references('people.id').onDelete('cascade'))
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('granted', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('revoked', 'text', (c) => c.notNull().defaultTo('[]'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('team_members_pk', ['account_id', 'person_id'])
        .execute();
      await db.schema.createIndex('team_members_person').on('team_members').column('person_id').execute();

      const accounts = (await db.selectFrom('accounts').select(['id', 'permissions', 'created_at']).execute()) as {
        id: number;
        permissions: string;
        created_at: number;
      }[];
      for (let i = 0; i < accounts.length; i += 200) {
        const rows = accounts.slice(i, i + 200).map((a) => {
          const had = new Set(controlPermissions(a.permissions));
          return {
            account_id: a.id,
            person_id: a.id,
            role: 'owner',
            granted: JSON.stringify([...had].filter((p) => !OWNER_CONTROL.includes(p)).sort()),
            revoked: JSON.stringify(OWNER_CONTROL.filter((p) => !had.has(p))),
            created_at: a.created_at,
          };
        });
        await db.insertInto('team_members').values(rows).execute();
      }

      // An owner may require two-factor sign-in of every member (docs/teams.md).
      await db.schema
        .alterTable('accounts')
        .addColumn('require_two_factor', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();

      // Invitations to a team: a link shown once (its SHA-256 kept), single use, with an expiry.
      const invitations = db.schema.createTable('team_invitations');
      await (dialect === 'sqlite'
        ? invitations.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
        : invitations.addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
      )
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('token_hash', 'text', (c) => c.notNull().unique())
        .addColumn('email', 'text')
        .addColumn('role', 'text', (c) => c.notNull())
        .addColumn('invited_by', 'bigint', (c) => c.references('people.id').onDelete('set null'))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addColumn('used_by', 'bigint', (c) => c.references('people.id').onDelete('set null'))
        .addColumn('revoked_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('team_invitations_account')
        .on('team_invitations')
        .columns(['account_id', 'created_at'])
        .execute();

      // The person's rows. SQLite adds a column with a reference only when it may be null; the
      // migration fills it for every row, and the console always writes it.
      const personColumn = (table: string) =>
        db.schema
          .alterTable(table)
          .addColumn('person_id', 'bigint', (c) => c.references('people.id').onDelete('cascade'))
          .execute();
      for (const table of ['sessions', 'access_tokens', 'signing_keys']) {
        await personColumn(table);
        await sql`UPDATE ${sql.table(table)} SET person_id = account_id`.execute(db);
        await db.schema.createIndex(`${table}_person`).on(table).columns(['person_id', 'account_id']).execute();
      }
      // Security events: a person's own (sign-ins, two-factor) name the person; a key's, the team.
      await db.schema.alterTable('security_events').addColumn('person_id', 'bigint').execute();
      await sql`UPDATE security_events SET person_id = account_id, account_id = NULL WHERE key_last4 IS NULL`.execute(
        db,
      );
      await db.schema
        .createIndex('security_events_person')
        .on('security_events')
        .columns(['person_id', 'created_at'])
        .execute();

      // Recovery codes and waiting sign-ins are the person's alone: remade with `person_id` in
      // place of `account_id` (nothing refers to them).
      await db.schema
        .createTable('person_recovery_codes')
        .addColumn('id', dialect === 'sqlite' ? 'integer' : 'bigint', (c) =>
          dialect === 'sqlite' ? c.primaryKey().autoIncrement() : c.primaryKey().generatedByDefaultAsIdentity(),
        )
        .addColumn('person_id', 'bigint', (c) => c.notNull().references('people.id').onDelete('cascade'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await sql`INSERT INTO person_recovery_codes (id, person_id, code_hash, used_at, created_at)
        SELECT id, account_id, code_hash, used_at, created_at FROM recovery_codes`.execute(db);
      await db.schema.dropTable('recovery_codes').execute();
      await sql`ALTER TABLE person_recovery_codes RENAME TO recovery_codes`.execute(db);
      if (dialect === 'postgres')
        await sql`SELECT setval(pg_get_serial_sequence('recovery_codes', 'id'),
          GREATEST((SELECT MAX(id) FROM recovery_codes), 1), (SELECT MAX(id) FROM recovery_codes) IS NOT NULL)`.execute(
          db,
        );
      await db.schema.createIndex('recovery_codes_person').on('recovery_codes').column('person_id').execute();

      await db.schema
        .createTable('person_login_challenges')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('person_id', 'bigint', (c) => c.notNull().references('people.id').onDelete('cascade'))
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await sql`INSERT INTO person_login_challenges (id_hash, person_id, failures, created_at, expires_at)
        SELECT id_hash, account_id, failures, created_at, expires_at FROM login_challenges`.execute(db);
      await db.schema.dropTable('login_challenges').execute();
      await sql`ALTER TABLE person_login_challenges RENAME TO login_challenges`.execute(db);
    },
  };
}

function controlPermissions(json: string): string[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((p): p is string => typeof p === 'string') : [];
  } catch {
    return [];
  }
}
