import { sql } from 'kysely';
import type { Database } from '../db/schema.js';

/**
 * Counts one more published change and NOTIFYs `channel` with `<number> <payload>`, in one statement:
 * the row lock orders the numbers as the commits, and PostgreSQL delivers notifications in commit
 * order, so listeners receive them in order and without gaps.
 */
export async function publishChange(db: Database, channel: string, payload: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    with bumped as (update change_counter set n = n + 1 where id = 1 returning n)
    select n, pg_notify(${channel}, n::text || ' ' || ${payload}) from bumped`.execute(db);
  return Number(rows[0]?.n);
}

/** The count of published changes so far. */
export async function currentChange(db: Database): Promise<number> {
  const row = await db.selectFrom('change_counter').select('n').where('id', '=', 1).executeTakeFirst();
  return Number(row?.n ?? 0);
}
