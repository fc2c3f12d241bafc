import { sql } from 'kysely';
import type { Database } from '../db/schema.js';
import { runPreparedOnPostgres } from './compiled.js';

/**
 * Counts one more published change and NOTIFYs `channel` with `<number> <payload>`, in one statement:
 * the row lock orders the numbers as the commits, and PostgreSQL delivers notifications in commit
 * order, so listeners receive them in order and without gaps.
 */
export async function publishChange(db: Database, channel: string, payload: string): Promise<number> {
  const rows = await runPreparedOnPostgres(
    db,
    sql<{ n: number }>`
    with bumped as (update change_counter set n = n + 1 where id = 1 returning n)
    select n, pg_notify(${channel}, n::text || ' ' || ${payload}) from bumped`,
  );
  return Number(rows[0]?.n);
}

/**
 * publishChange() as a statement to run inside another one (a data-modifying WITH, which runs to
 * completion whether read or not): the message goes out with that statement's commit, numbered by
 * the same counter.
 */
export function publishChangeWith(channel: string, payload: string) {
  return sql`update change_counter set n = n + 1 where id = 1
    returning pg_notify(${channel}, n::text || ' ' || ${payload})`;
}

/** The count of published changes so far. */
export async function currentChange(db: Database): Promise<number> {
  const row = await db.selectFrom('change_counter').select('n').where('id', '=', 1).executeTakeFirst();
  return Number(row?.n ?? 0);
}
