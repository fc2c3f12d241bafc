import { PostgresAdapter, sql } from 'kysely';
import type { Database } from '../db/schema.js';

/** True on PostgreSQL: for the few statements whose best form differs between the two dialects. */
export function isPostgres(db: Database): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * `column IN (values)` for the batched reads of the check-in path: on PostgreSQL `= any($1)` with
 * one array parameter, so the statement's text is the same whatever the batch's size (planned once,
 * not once per size); SQLite's statement cache (db/database.ts) keeps one per size.
 */
export function oneOf(db: Database, column: string, values: readonly (number | string)[], type: 'bigint' | 'text') {
  return isPostgres(db)
    ? sql<boolean>`${sql.ref(column)} = any(${values}::${sql.raw(type)}[])`
    : sql<boolean>`${sql.ref(column)} in (${sql.join(values)})`;
}
