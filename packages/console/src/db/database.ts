import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import type { ConsoleConfig } from '../config.js';
import { sqliteOptions } from '../packaged.js';
import { type Dialect, migrationProvider, RENAMED_MIGRATIONS } from './migrations/index.js';
import { ScopedPostgresDialect } from './postgres-introspector.js';
import { withPreparedStatements } from './prepared-statements.js';
import type { Database, DB } from './schema.js';

// PostgreSQL's bigint (epoch ms, counts) arrives as a string by default; every value we store fits a double.
pg.types.setTypeParser(20, (v) => Number.parseInt(v, 10));

export interface DatabaseHandle {
  db: Database;
  dialect: Dialect;
  /** PostgreSQL pool connections (open, idle, requests waiting for one); null on SQLite's one connection. */
  poolStats(): { total: number; idle: number; waiting: number } | null;
  close(): Promise<void>;
}

/** Kysely prepares every query anew; better-sqlite3 statements can be reused, which saves the parse on hot paths. */
function withStatementCache(file: SQLite.Database) {
  const cache = new Map<string, SQLite.Statement>();
  return {
    prepare(sql: string) {
      let statement = cache.get(sql);
      if (!statement) {
        if (cache.size >= 512) cache.clear(); // queries with long IN lists vary; keep the cache bounded
        statement = file.prepare(sql);
        cache.set(sql, statement);
      }
      return statement;
    },
    close() {
      cache.clear();
      file.close();
    },
  };
}

/** Each SQLite handle's statement cache, by its Kysely adapter: shared by the handle and its transactions. */
const sqliteConnections = new WeakMap<object, { prepare(sql: string): SQLite.Statement }>();

/**
 * Runs a statement straight on SQLite's connection when `db` is a transaction on it, and answers its
 * rows; undefined otherwise (PostgreSQL, or not in a transaction). A transaction holds SQLite's one
 * connection from its BEGIN to its end (Kysely's SQLite driver queues every other query behind it),
 * so the statement runs where Kysely would run it, as Kysely runs it (`all` for a statement that
 * returns rows, `run` otherwise), without the promises and connection queue Kysely spends on every
 * query: about 9 µs of CPU a statement, measured, on the check-in writer's per-check-in statements
 * (docs/performance.md, "Check-in ingest and capacity").
 */
export function runInSqliteTransaction(
  db: Database,
  sql: string,
  parameters: readonly unknown[],
): unknown[] | undefined {
  if (!db.isTransaction) return undefined;
  const connection = sqliteConnections.get(db.getExecutor().adapter);
  if (!connection) return undefined;
  const statement = connection.prepare(sql);
  if (statement.reader) return statement.all(parameters);
  statement.run(parameters);
  return [];
}

/** `PRAGMA data_version` prepared once on each SQLite connection, by its Kysely instance, for dataVersion(). */
const dataVersions = new WeakMap<object, SQLite.Statement>();

/**
 * SQLite's `PRAGMA data_version` of the connection behind `db`: it moves whenever another connection
 * (another process, the admin CLI) commits to the file, never for this connection's own writes.
 * Read synchronously, without a query through Kysely; null on PostgreSQL.
 */
export function dataVersion(db: Database): number | null {
  const statement = dataVersions.get(db);
  return statement ? (statement.get() as number) : null;
}

/** Applies RENAMED_MIGRATIONS to the migration table, when there is one (run under the startup lock). */
async function renameMigrations(db: Database, dialect: Dialect) {
  const table =
    dialect === 'postgres'
      ? sql<{ found: string | null }>`SELECT to_regclass('kysely_migration')::text AS found`
      : sql<{
          found: string | null;
        }>`SELECT name AS found FROM sqlite_master WHERE type = 'table' AND name = 'kysely_migration'`;
  if (!(await table.execute(db)).rows[0]?.found) return;
  for (const [old, name] of Object.entries(RENAMED_MIGRATIONS)) {
    await sql`UPDATE kysely_migration SET name = ${name} WHERE name = ${old}`.execute(db);
  }
}

/** Where the database is; prepared statements only when set on (docs/console.md). */
type DatabaseSettings = Pick<ConsoleConfig, 'databaseUrl' | 'databaseSchema' | 'dataDir'> &
  Partial<Pick<ConsoleConfig, 'databasePreparedStatements'>>;

/**
 * Opens SQLite under the data dir, or PostgreSQL when a URL is configured, and migrates it to the latest
 * version, or only up to the migration `upTo` names (a restore lays out the backup's version first).
 */
export async function openDatabase(config: DatabaseSettings, options: { upTo?: string } = {}): Promise<DatabaseHandle> {
  let db: Database;
  let dialect: Dialect;
  // On PostgreSQL, processes starting together take turns: an advisory lock is held around
  // creating the schema and migrating (concurrent CREATE … IF NOT EXISTS can still collide).
  let startupLock: pg.Client | null = null;
  let pool: pg.Pool | null = null;
  if (config.databaseUrl) {
    dialect = 'postgres';
    const schema = config.databaseSchema;
    startupLock = new pg.Client({ connectionString: config.databaseUrl });
    await startupLock.connect();
    try {
      await startupLock.query('SELECT pg_advisory_lock(hashtext($1))', [`palisade-migrate:${schema ?? 'public'}`]);
      if (schema) await startupLock.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    } catch (err) {
      await startupLock.end();
      throw err;
    }
    pool = new pg.Pool({
      connectionString: config.databaseUrl,
      max: 10,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    db = new Kysely<DB>({
      dialect: new ScopedPostgresDialect({
        pool: config.databasePreparedStatements === true ? withPreparedStatements(pool) : pool,
      }),
    });
  } else {
    dialect = 'sqlite';
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    const file = new SQLite(join(config.dataDir, 'console.db'), sqliteOptions());
    // WAL with synchronous=NORMAL keeps every committed write through a process crash (SIGKILL).
    file.pragma('journal_mode = WAL');
    file.pragma('synchronous = NORMAL');
    file.pragma('foreign_keys = ON');
    file.pragma('busy_timeout = 5000');
    const connection = withStatementCache(file);
    db = new Kysely<DB>({ dialect: new SqliteDialect({ database: connection }) });
    sqliteConnections.set(db.getExecutor().adapter, connection);
    dataVersions.set(db, file.prepare('PRAGMA data_version').pluck());
  }
  try {
    // Name the schema of the migration tables: otherwise Kysely finds another schema's tables and skips making its own.
    const migrationTableSchema = dialect === 'postgres' ? (config.databaseSchema ?? 'public') : undefined;
    await renameMigrations(db, dialect);
    const migrator = new Migrator({
      db,
      provider: migrationProvider(dialect),
      ...(migrationTableSchema ? { migrationTableSchema } : {}),
    });
    const { error } = await (options.upTo ? migrator.migrateTo(options.upTo) : migrator.migrateToLatest());
    if (error) throw error;
  } catch (err) {
    await db.destroy();
    throw new Error(`database migration failed: ${(err as Error).message}`);
  } finally {
    await startupLock?.end(); // ending the session releases the advisory lock
  }
  const stats = pool;
  return {
    db,
    dialect,
    poolStats: () => (stats ? { total: stats.totalCount, idle: stats.idleCount, waiting: stats.waitingCount } : null),
    close: () => db.destroy(),
  };
}
