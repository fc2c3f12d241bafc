import type { Migration } from 'kysely';
import { type AnyDb, type Dialect, withId } from './helpers.js';

/**
 * Account security (docs/security.md, "Account security"): where and when each session was last
 * seen, the TOTP secret (sealed with the console's secret key, like agent keys) with the last time
 * step used (a code is taken once), recovery codes as SHA-256, and the sign-ins waiting for their code.
 */
export function accountSecurity(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema.alterTable('sessions').addColumn('last_seen_at', 'bigint').execute();
      await db.schema.alterTable('sessions').addColumn('ip', 'text').execute();
      await db.schema.alterTable('sessions').addColumn('user_agent', 'text').execute();

      await db.schema.alterTable('accounts').addColumn('totp_secret_enc', 'text').execute();
      await db.schema.alterTable('accounts').addColumn('totp_pending_enc', 'text').execute();
      await db.schema.alterTable('accounts').addColumn('totp_enabled_at', 'bigint').execute();
      await db.schema.alterTable('accounts').addColumn('totp_last_step', 'bigint').execute();

      await withId(dialect, db.schema.createTable('recovery_codes'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('used_at', 'bigint')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('recovery_codes_account').on('recovery_codes').column('account_id').execute();

      await db.schema
        .createTable('login_challenges')
        .addColumn('id_hash', 'text', (c) => c.primaryKey())
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
    },
  };
}
