import { type Compilable, CompiledQuery, type RawBuilder } from 'kysely';
import { runInSqliteTransaction } from '../db/database.js';
import { prepareOnPostgres } from '../db/prepared-statements.js';
import type { Database } from '../db/schema.js';
import { isPostgres } from './dialect.js';

/** A query compiled once: its SQL and, for each of its parameter positions, the name bound there. */
interface Compiled {
  sql: string;
  names: readonly string[];
}

/**
 * Compiled queries by what compiling depends on: the dialect's adapter, shared by a database handle
 * and every transaction opened on it (a transaction is a new handle each time, and the check-in
 * writer runs its hot statements in one per group); a handle with plugins, which may rewrite a
 * query, by the handle itself.
 */
const cache = new WeakMap<object, Map<string, Compiled>>();

function cacheKey(db: Database): object {
  const executor = db.getExecutor();
  return executor.plugins.length === 0 ? executor.adapter : db;
}

/** The stand-in for a named parameter while a query is compiled: found again by identity. */
class Placeholder {
  constructor(readonly name: string) {}
}

/**
 * Runs a hot query without building and compiling it on every call: the SQL is compiled once per
 * database handle from `build`, then executed with `parameters` bound by name. `build` receives,
 * in place of each of `parameters`' values, a placeholder of its own; the position where each one
 * lands in the compiled query is where that parameter's value is bound, so the order of the
 * `.where()` calls (or of an INSERT's columns) cannot swap two values.
 *
 * Compiling checks that every compiled parameter is one of the named ones and that each name is
 * used exactly once, and throws naming the query otherwise (a constant left in the query, a name
 * used twice or not at all). Only for queries whose shape never changes with their arguments.
 */
export async function runCompiled<Row, P extends Record<string, unknown>>(
  db: Database,
  name: string,
  build: (db: Database, parameters: P) => Compilable<Row>,
  parameters: P,
): Promise<Row[]> {
  const key = cacheKey(db);
  let byName = cache.get(key);
  if (!byName) {
    byName = new Map();
    cache.set(key, byName);
  }
  let compiled = byName.get(name);
  if (compiled === undefined) {
    compiled = compileNamed(db, name, build, Object.keys(parameters));
    byName.set(name, compiled);
    if (isPostgres(db)) prepareOnPostgres(compiled.sql);
  }
  const values = new Array<unknown>(compiled.names.length);
  for (let i = 0; i < values.length; i++) values[i] = parameters[compiled.names[i]!];
  // In a transaction on SQLite, straight on its connection (db/database.ts).
  const direct = runInSqliteTransaction(db, compiled.sql, values);
  if (direct !== undefined) return direct as Row[];
  const result = await db.executeQuery<Row>(CompiledQuery.raw(compiled.sql, values));
  return result.rows;
}

/**
 * A statement of fixed text (only its parameters vary) as a prepared statement on PostgreSQL
 * (db/prepared-statements.ts): for the raw statements of the check-in path.
 */
export async function runPreparedOnPostgres<Row>(db: Database, query: RawBuilder<Row>): Promise<Row[]> {
  const compiled = query.compile(db);
  prepareOnPostgres(compiled.sql);
  return (await db.executeQuery(compiled)).rows;
}

/** Compiles `build` with a placeholder for each of `names` and maps each parameter position to its name. */
function compileNamed<P>(
  db: Database,
  name: string,
  build: (db: Database, parameters: P) => Compilable<unknown>,
  names: readonly string[],
): Compiled {
  const placeholders = Object.fromEntries(names.map((n) => [n, new Placeholder(n)]));
  const query = build(db, placeholders as P).compile();
  const positions = query.parameters.map((value, i) => {
    if (value instanceof Placeholder && placeholders[value.name] === value) return value.name;
    throw new Error(
      `compiled query ${name}: parameter ${i + 1} is ${describeValue(value)}, not one of the named parameters (${names.join(', ')})`,
    );
  });
  // Every position holds a name and every name one position: as many parameters as names.
  for (const n of names) {
    const uses = positions.filter((p) => p === n).length;
    if (uses !== 1) {
      throw new Error(
        `compiled query ${name}: parameter ${n} is used ${uses} times in the query, expected exactly once`,
      );
    }
  }
  return { sql: query.sql, names: positions };
}

function describeValue(value: unknown) {
  if (value instanceof Placeholder) return `a placeholder of another query (${value.name})`;
  return `the constant ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`;
}
