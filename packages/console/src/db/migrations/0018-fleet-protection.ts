import type { Migration } from 'kysely';
import { type AnyDb, type Dialect, withId } from './helpers.js';

/**
 * Fleet-wide protection (docs/protection.md, "Fleet policies"): an account's policies (when a server
 * bans an address, ban it on these servers too), its fleet list entries (propagated bans and entries
 * added by hand), and each entry's state on each server it applies to.
 */
export function fleetProtection(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      await withId(dialect, db.schema.createTable('fleet_policies'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('trigger', 'text', (c) => c.notNull())
        .addColumn('scope_kind', 'text', (c) => c.notNull())
        .addColumn('scope_tags', 'text')
        .addColumn('scope_product_id', 'bigint')
        .addColumn('duration_s', 'integer')
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('fleet_policies_account').on('fleet_policies').column('account_id').execute();

      await withId(dialect, db.schema.createTable('fleet_entries'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('list', 'text', (c) => c.notNull())
        .addColumn('address', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('origin_kind', 'text', (c) => c.notNull())
        .addColumn('origin_server_id', 'bigint')
        .addColumn('origin_server_name', 'text')
        .addColumn('origin_event', 'text')
        .addColumn('policy_id', 'bigint')
        .addColumn('scope_kind', 'text', (c) => c.notNull())
        .addColumn('scope_tags', 'text')
        .addColumn('scope_product_id', 'bigint')
        .addColumn('created_by', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('expires_at', 'bigint')
        .addColumn('lifted_at', 'bigint')
        .addColumn('lifted_by', 'text')
        // `<account>:<list>:<address>` while the entry is in force, null once lifted: one live entry
        // per address and list, however many console processes hear of the same ban at once.
        .addColumn('active_key', 'text', (c) => c.unique())
        .execute();
      await db.schema.createIndex('fleet_entries_account').on('fleet_entries').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('fleet_entries_expiry').on('fleet_entries').column('expires_at').execute();

      await withId(dialect, db.schema.createTable('fleet_applications'))
        .addColumn('entry_id', 'bigint', (c) => c.notNull().references('fleet_entries.id').onDelete('cascade'))
        .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('account_id', 'bigint', (c) => c.notNull())
        .addColumn('want', 'text', (c) => c.notNull())
        .addColumn('force', 'integer', (c) => c.notNull())
        .addColumn('state', 'text', (c) => c.notNull())
        .addColumn('reason', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('locked_until', 'bigint', (c) => c.notNull())
        .addColumn('applied_at', 'bigint')
        .addColumn('preexisting', 'integer', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .addUniqueConstraint('fleet_applications_entry_server', ['entry_id', 'server_id'])
        .execute();
      await db.schema
        .createIndex('fleet_applications_due')
        .on('fleet_applications')
        .columns(['state', 'next_attempt_at'])
        .execute();
      await db.schema.createIndex('fleet_applications_server').on('fleet_applications').column('server_id').execute();
    },
  };
}
