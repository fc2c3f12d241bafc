import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * One row counting the changes published to other console processes (services/changes.service.ts):
 * every NOTIFY carries the next number, and each v1 request's rate-limit statement reads the
 * current one, so a process can tell when it has not yet heard of a change that already happened.
 */
export const changeCounter: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('change_counter')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('n', 'bigint', (c) => c.notNull())
      .execute();
    await db.insertInto('change_counter').values({ id: 1, n: 0 }).execute();
  },
};
