import { type Compilable, CompiledQuery } from 'kysely';
import type { Database } from '../db/schema.js';

const cache = new WeakMap<Database, Map<string, string>>();

/**
 * Runs a hot query without building and compiling it on every call: the SQL is compiled once per
 * database handle from `build` (with placeholder parameters) and then executed with `parameters`.
 * Only for queries whose shape never changes with their arguments.
 */
export async function runCompiled<Row>(
  db: Database,
  name: string,
  build: (db: Database) => Compilable<Row>,
  parameters: unknown[],
) {
  let byName = cache.get(db);
  if (!byName) {
    byName = new Map();
    cache.set(db, byName);
  }
  let sql = byName.get(name);
  if (sql === undefined) {
    sql = build(db).compile().sql;
    byName.set(name, sql);
  }
  const result = await db.executeQuery<Row>(CompiledQuery.raw(sql, parameters));
  return result.rows;
}
