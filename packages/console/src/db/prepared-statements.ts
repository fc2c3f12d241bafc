import type { PostgresPool, PostgresPoolClient } from 'kysely';
import type pg from 'pg';

/** Statement names by SQL text: the statements marked by `prepareOnPostgres`. */
const names = new Map<string, string>();

/**
 * Marks a statement whose text never changes (compiled once, repositories/compiled.ts) to run as a
 * named prepared statement on PostgreSQL: each connection parses and plans it once, instead of at
 * every execution as it does an unnamed one (docs/performance.md, "Check-in ingest and capacity").
 * Not for a text with `*` in it: a prepared `SELECT *` fails ("cached plan must not change result
 * type") once another process's migration adds a column to its table.
 */
export function prepareOnPostgres(sql: string): void {
  if (names.has(sql) || sql.includes('*')) return;
  names.set(sql, `palisade_${names.size + 1}`);
}

/** Whether `sql` runs as a named prepared statement (for tests). */
export const isPreparedOnPostgres = (sql: string) => names.has(sql);

/**
 * The pool as Kysely's PostgreSQL driver takes it, running the statements marked above by name. One
 * wrapper per connection, so the driver keeps recognising each connection it has seen.
 */
export function withPreparedStatements(pool: pg.Pool): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => ({
    query: ((text: unknown, values?: unknown[]) => {
      const name = typeof text === 'string' ? names.get(text) : undefined;
      if (name === undefined) return (client.query as (...args: unknown[]) => unknown)(text, values);
      return client.query({ name, text: text as string, values: values ?? [] });
    }) as PostgresPoolClient['query'],
    release: () => client.release(),
  });
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) {
        wrapper = wrap(client);
        wrappers.set(client, wrapper);
      }
      return wrapper;
    },
    end: () => pool.end(),
  };
}
