import type { Migration } from 'kysely';
import { type AnyDb, type Dialect, withId } from './helpers.js';

/** SVC1 signing keys and nonces, the security event stream, tickets, and the notification outbox. */
export function signingAndTickets(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      await withId(dialect, db.schema.createTable('signing_keys'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('key_hash', 'text', (c) => c.notNull().unique())
        .addColumn('last4', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('last_used_at', 'bigint')
        .execute();
      await db.schema.createIndex('signing_keys_account').on('signing_keys').column('account_id').execute();

      await db.schema
        .createTable('svc1_nonces')
        .addColumn('key_id', 'bigint', (c) => c.notNull().references('signing_keys.id').onDelete('cascade'))
        .addColumn('ts', 'bigint', (c) => c.notNull())
        .addColumn('nonce', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addPrimaryKeyConstraint('svc1_nonces_pk', ['key_id', 'ts', 'nonce'])
        .execute();
      await db.schema.createIndex('svc1_nonces_created').on('svc1_nonces').column('created_at').execute();

      await withId(dialect, db.schema.createTable('security_events'))
        .addColumn('account_id', 'bigint', (c) => c.references('accounts.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('reason', 'text', (c) => c.notNull())
        .addColumn('key_last4', 'text')
        .addColumn('method', 'text', (c) => c.notNull())
        .addColumn('path', 'text', (c) => c.notNull())
        .addColumn('ip', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('security_events_account')
        .on('security_events')
        .columns(['account_id', 'created_at'])
        .execute();

      await withId(dialect, db.schema.createTable('tickets'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('product_id', 'bigint', (c) => c.notNull().references('products.id'))
        .addColumn('ref', 'text', (c) => c.notNull().unique())
        .addColumn('subject', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('tickets_account').on('tickets').columns(['account_id', 'updated_at']).execute();

      await withId(dialect, db.schema.createTable('ticket_messages'))
        .addColumn('ticket_id', 'bigint', (c) => c.notNull().references('tickets.id').onDelete('cascade'))
        .addColumn('author_id', 'bigint', (c) => c.notNull().references('accounts.id'))
        .addColumn('author_role', 'text', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('ticket_messages_ticket').on('ticket_messages').column('ticket_id').execute();

      await db.schema
        .createTable('account_webhooks')
        .addColumn('account_id', 'bigint', (c) => c.primaryKey().references('accounts.id').onDelete('cascade'))
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('secret_enc', 'text', (c) => c.notNull())
        .addColumn('updated_at', 'bigint', (c) => c.notNull())
        .execute();

      await withId(dialect, db.schema.createTable('notifications'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('kind', 'text', (c) => c.notNull())
        .addColumn('payload', 'text', (c) => c.notNull())
        .addColumn('status', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('next_attempt_at', 'bigint', (c) => c.notNull())
        .addColumn('locked_until', 'bigint', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .addColumn('delivered_at', 'bigint')
        .execute();
      await db.schema
        .createIndex('notifications_due')
        .on('notifications')
        .columns(['status', 'next_attempt_at'])
        .execute();

      await withId(dialect, db.schema.createTable('notification_attempts'))
        .addColumn('notification_id', 'bigint', (c) => c.notNull().references('notifications.id').onDelete('cascade'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('url', 'text', (c) => c.notNull())
        .addColumn('status_code', 'integer')
        .addColumn('error', 'text')
        .addColumn('duration_ms', 'integer', (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('notification_attempts_account')
        .on('notification_attempts')
        .columns(['account_id', 'at'])
        .execute();
    },
  };
}
