import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/** When a pending run's token was last handed to the agent in a check-in answer. */
export const benchmarkHandoff: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('benchmark_runs').addColumn('handed_at', 'bigint').execute();
  },
};
