import { type Migration, sql } from 'kysely';
import type { AnyDb, Dialect } from './helpers.js';

/**
 * One row counting the changes published to other console processes (services/coherence/):
 * every message carries the next number, and each v1 token request reads the
 * current one, so a process can tell when it has not yet heard of a change that already happened.
 * On PostgreSQL the rate-limit windows become an unlogged table.
 */
export const changeCounter = (dialect: Dialect): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .createTable('change_counter')
      .addColumn('id', 'integer', (c) => c.primaryKey())
      .addColumn('n', 'bigint', (c) => c.notNull())
      .execute();
    await db.insertInto('change_counter').values({ id: 1, n: 0 }).execute();
    // Every token request counts an attempt here: without WAL its commit does not wait for a disk
    // flush. After a crash PostgreSQL empties it, which only restarts the windows of that minute.
    if (dialect === 'postgres') await sql`alter table rate_limit_windows set unlogged`.execute(db);
  },
});
