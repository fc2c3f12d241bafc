import type { Migration } from 'kysely';
import { type AnyDb, type Dialect, withId } from './helpers.js';

/**
 * The audit log (docs/protection.md, "Audit log"): every change made to a server's protection
 * through the console, who made it, from where, and what the agent answered. Rows are only added
 * (and removed by age); nothing updates them.
 */
export function auditLog(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      await withId(dialect, db.schema.createTable('audit_log'))
        .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
        .addColumn('at', 'bigint', (c) => c.notNull())
        .addColumn('actor_kind', 'text', (c) => c.notNull())
        .addColumn('actor_id', 'bigint')
        .addColumn('actor', 'text', (c) => c.notNull())
        .addColumn('ip', 'text')
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('server_id', 'bigint')
        .addColumn('server_name', 'text')
        .addColumn('method', 'text')
        .addColumn('path', 'text')
        .addColumn('summary', 'text', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('outcome', 'text', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('audit_log_account_id').on('audit_log').columns(['account_id', 'id']).execute();
      await db.schema.createIndex('audit_log_at').on('audit_log').column('at').execute();
    },
  };
}
