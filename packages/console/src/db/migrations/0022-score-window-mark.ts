import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * `servers.score_window_mark`: a number the check-in writer (services/checkin-writer.ts) sets anew
 * with every check-in it writes. A console process keeps the score window of the servers it wrote
 * in memory and trusts it only while the row still carries the mark it wrote; another process's
 * check-in of the same server changes the mark, and the window is then read from `samples` again.
 */
export const scoreWindowMark = (): Migration => ({
  async up(db: AnyDb) {
    await db.schema.alterTable('servers').addColumn('score_window_mark', 'bigint').execute();
  },
});
