import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/** Shared fixed-window counters and job leases, so several console processes on one database act as one. */
export const scaleOut: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('rate_limit_windows')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('count', 'integer', (c) => c.notNull())
      .addColumn('window_end', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('rate_limit_windows_end').on('rate_limit_windows').column('window_end').execute();
    await db.schema
      .createTable('job_leases')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
