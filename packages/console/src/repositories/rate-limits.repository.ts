import { sql } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * Counts one attempt in the key's fixed window, atomically: a new or expired window starts at 1 and
 * ends `durationMs` from now; otherwise the count goes up. One statement, so concurrent processes agree.
 * The same statement reads the count of published changes (services/changes.service.ts).
 */
export async function countAttempt(db: Database, key: string, now: number, durationMs: number) {
  return db
    .insertInto('rate_limit_windows')
    .values({ key, count: 1, window_end: now + durationMs })
    .onConflict((oc) =>
      oc.column('key').doUpdateSet({
        count: sql<number>`case when rate_limit_windows.window_end <= ${now} then 1 else rate_limit_windows.count + 1 end`,
        window_end: sql<number>`case when rate_limit_windows.window_end <= ${now} then ${now + durationMs} else rate_limit_windows.window_end end`,
      }),
    )
    .returning(['count', 'window_end', sql<number>`(select n from change_counter where id = 1)`.as('change')])
    .executeTakeFirstOrThrow();
}

export async function deleteEndedWindows(db: Database, now: number) {
  await db.deleteFrom('rate_limit_windows').where('window_end', '<=', now).execute();
}
