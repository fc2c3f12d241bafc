import { PostgresAdapter, sql } from 'kysely';
import type { Database } from '../db/schema.js';

/** True on PostgreSQL: for the few statements whose best form differs between the two dialects. */
export function isPostgres(db: Database): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/**
 * `column IN (values)` for the batched reads of the check-in path, with the values as one parameter
 * (`list`, made by `listParameter`): on PostgreSQL `= any($1)` with an array, on SQLite
 * `in (select value from json_each(?))` with a JSON array (both keep using the column's index). The
 * statement's text is the same whatever the batch's size, so it is planned (PostgreSQL) or prepared
 * (SQLite, db/database.ts) once, and can be compiled once (compiled.ts: `list` may be its placeholder).
 */
export function oneOf(db: Database, column: string, list: unknown, type: 'bigint' | 'text') {
  return isPostgres(db)
    ? sql<boolean>`${sql.ref(column)} = any(${list}::${sql.raw(type)}[])`
    : sql<boolean>`${sql.ref(column)} in (select value from json_each(${list}))`;
}

/** The values of a `oneOf` as its one parameter: the array itself on PostgreSQL, JSON text on SQLite. */
export function listParameter(db: Database, values: readonly (number | string)[]): unknown {
  return isPostgres(db) ? values : JSON.stringify(values);
}
