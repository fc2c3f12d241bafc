import type { CreateTableBuilder, Kysely } from 'kysely';

export type Dialect = 'sqlite' | 'postgres';

// biome-ignore lint/suspicious/noExplicitAny: migrations run against the schema of their own time
export type AnyDb = Kysely<any>;

/**
 * Migrations are written once for both dialects. Only the id column differs:
 * SQLite's INTEGER PRIMARY KEY AUTOINCREMENT versus PostgreSQL's identity column.
 */
export function withId<T extends string>(dialect: Dialect, table: CreateTableBuilder<T, never>) {
  return dialect === 'sqlite'
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity());
}
