import type { Migration } from 'kysely';
import { type AnyDb, type Dialect, withId } from './helpers.js';

/**
 * Alerts (docs/alerts.md): an account's channels and rules, the state of each rule on each server
 * (so a restart neither sends again nor loses a transition), maintenance mutes, and a channel id on
 * the notification outbox (0: the account's signed webhook) so alerts share its retries and log.
 */
export function alerts(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      await withId(dialect, db.schema.createTable('alert_channels'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('target_enc', 'text')
        .addColumn('target_hint', 'text', (c) => c.notNull())
        .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('last_success_at', 'bigint')
        .addColumn('last_error', 'text')
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('alert_channels_account').on('alert_channels').column('account_id').execute();

      await withId(dialect, db.schema.createTable('alert_rules'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('metric', 'text')
        .addColumn('threshold', 'double precision')
        .addColumn('minutes', 'integer', (c) => c.notNull())
        .addColumn('repeat_minutes', 'integer', (c) => c.notNull())
        .addColumn('server_ids', 'text')
        .addColumn('channel_ids', 'text', (c) => c.notNull())
        .addColumn('enabled', 'integer', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('alert_rules_account').on('alert_rules').column('account_id').execute();

      await db.schema
        .createTable('alert_states')
        .addColumn('rule_id', 'bigint', (c) => c.notNull().references('alert_rules.id').onDelete('cascade'))
        .addColumn('server_id', 'bigint', (c) => c.notNull().references('servers.id').onDelete('cascade'))
        .addColumn('firing', 'integer', (c) => c.notNull())
        .addColumn('since', 'bigint', (c) => c.notNull())
        .addColumn('last_notified_at', 'bigint')
        .addColumn('value', 'double precision')
        .addPrimaryKeyConstraint('alert_states_pk', ['rule_id', 'server_id'])
        .execute();

      await db.schema
        .createTable('alert_mutes')
        .addColumn('server_id', 'bigint', (c) => c.primaryKey().references('servers.id').onDelete('cascade'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('until', 'bigint', (c) => c.notNull())
        .execute();

      await db.schema
        .alterTable('notifications')
        .addColumn('channel_id', 'bigint', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema
        .createIndex('notifications_channel_queue')
        .on('notifications')
        .columns(['channel_id', 'status', 'next_attempt_at'])
        .execute();
    },
  };
}
