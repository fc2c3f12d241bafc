import { type SelectQueryBuilder, sql } from 'kysely';
import { type PageRequest, pageCursor } from '../validation.js';

/**
 * One page of a list, newest first, by keyset (docs/api.md, "Lists that page"): the rows strictly
 * after the cursor's `(key, id)` in `key desc, id desc` order, one extra fetched to know whether
 * another page follows, and how many rows the unpaged query holds. Rows added later sort before the
 * cursor, so a walk never repeats or skips a row because new ones arrived. `order: 'asc'` pages
 * oldest first instead (the members of a team); rows added later then come on the last page.
 */
export async function keysetPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  columns: { key: string; id: string; order?: 'asc' | 'desc' },
  page: PageRequest,
  keyOf: (row: O) => readonly [number, number],
) {
  const counted = await query.clearSelect().select(sql<number>`count(*)`.as('n')).executeTakeFirstOrThrow();
  const order = columns.order ?? 'desc';
  let paged = query;
  if (page.after) {
    const [key, id] = page.after;
    const k = sql.ref(columns.key);
    const beyond = sql.raw(order === 'desc' ? '<' : '>');
    paged = paged.where(
      sql<boolean>`(${k} ${beyond} ${key} or (${k} = ${key} and ${sql.ref(columns.id)} ${beyond} ${id}))`,
    );
  }
  const rows = await paged
    .orderBy(sql.ref(columns.key), order)
    .orderBy(sql.ref(columns.id), order)
    .limit(page.limit + 1)
    .execute();
  const items = rows.slice(0, page.limit);
  const last = items.at(-1);
  return {
    items,
    next_cursor: rows.length > page.limit && last ? pageCursor(...keyOf(last)) : null,
    total: Number((counted as { n: number | string }).n),
  };
}
