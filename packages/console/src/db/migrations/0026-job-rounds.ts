import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * The last finished round of each periodic job, whichever process ran it (docs/alerts.md, "Timing"):
 * readiness, metrics and the dashboard tell from it when alerts were last evaluated, and each process
 * from it whether a round is due, so several consoles keep one cadence.
 */
export const jobRounds: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('job_rounds')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('holder', 'text', (c) => c.notNull())
      .addColumn('started_at', 'bigint', (c) => c.notNull())
      .addColumn('finished_at', 'bigint', (c) => c.notNull())
      .execute();
  },
};
