import pg from 'pg';
import type { ArchiveWriter } from './archive.js';

/** Kysely's own tables: the restore lays out the schema by migrating, so these are never copied as rows. */
const MIGRATION_TABLES = ['kysely_migration', 'kysely_migration_lock'];
const q = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function connect(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

/** The schema's tables, parents before the tables whose foreign keys point at them. */
async function tablesInOrder(client: pg.Client, schema: string): Promise<string[]> {
  const tables = (
    await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname`,
      [schema],
    )
  ).rows
    .map((r) => r.name)
    .filter((t) => !MIGRATION_TABLES.includes(t));
  const edges = (
    await client.query<{ child: string; parent: string }>(
      `SELECT ch.relname AS child, pa.relname AS parent FROM pg_constraint co
       JOIN pg_class ch ON ch.oid = co.conrelid JOIN pg_class pa ON pa.oid = co.confrelid
       JOIN pg_namespace n ON n.oid = ch.relnamespace WHERE co.contype = 'f' AND n.nspname = $1`,
      [schema],
    )
  ).rows;
  const ordered: string[] = [];
  const placed = new Set<string>();
  const visit = (table: string, path: Set<string>) => {
    if (placed.has(table) || path.has(table)) return;
    path.add(table);
    for (const e of edges) if (e.child === table && e.parent !== table) visit(e.parent, path);
    placed.add(table);
    ordered.push(table);
  };
  for (const t of tables) visit(t, new Set());
  return ordered;
}

/**
 * Copies the schema's rows into the archive from one REPEATABLE READ snapshot (the console keeps
 * serving meanwhile): a `#table` line, then each row as one line of JSON (to_jsonb: never a raw newline).
 */
export async function dumpPostgres(
  url: string,
  schema: string,
  start: (migrations: string[]) => ArchiveWriter,
): Promise<ArchiveWriter> {
  const client = await connect(url);
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    if (exists.rowCount === 0) throw new Error(`no schema ${schema} in the database`);
    const migrations = (
      await client.query<{ name: string }>(`SELECT name FROM ${q(schema)}.kysely_migration ORDER BY name`)
    ).rows.map((r) => r.name);
    const archive = start(migrations);
    try {
      for (const table of await tablesInOrder(client, schema)) {
        archive.write(`#${table}\n`);
        await client.query(
          `DECLARE rows NO SCROLL CURSOR FOR SELECT to_jsonb(t)::text AS r FROM ${q(schema)}.${q(table)} t`,
        );
        for (;;) {
          const { rows } = await client.query<{ r: string }>('FETCH 1000 FROM rows');
          if (rows.length === 0) break;
          archive.write(`${rows.map((row) => row.r).join('\n')}\n`);
        }
        await client.query('CLOSE rows');
      }
      await client.query('COMMIT');
    } catch (err) {
      archive.abandon();
      throw err;
    }
    return archive;
  } finally {
    await client.end();
  }
}

/** Rows by table, as the archive lists them; anything else in the body is damage. */
export function parseRows(body: Buffer, file: string): Map<string, string[]> {
  const tables = new Map<string, string[]>();
  let current: string[] | null = null;
  const text = body.toString('utf8');
  for (const line of text.length === 0 ? [] : text.replace(/\n$/, '').split('\n')) {
    if (line.startsWith('#')) {
      current = [];
      tables.set(line.slice(1), current);
    } else if (current && line.startsWith('{') && line.endsWith('}')) current.push(line);
    else throw new Error(`${file} is not a complete Palisade backup (a row outside any table)`);
  }
  return tables;
}

/** Refuses a schema that holds any table, view or sequence: a restore never merges. */
export async function refuseUsedSchema(url: string, schema: string) {
  const client = await connect(url);
  try {
    const { rows } = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')`,
      [schema],
    );
    if ((rows[0]?.n ?? 0) > 0)
      throw new Error(
        `the schema ${schema} is not empty (${rows[0]!.n} tables, views or sequences); restore only into an empty schema`,
      );
    return (await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema])).rowCount !== 0;
  } finally {
    await client.end();
  }
}

/** Loads the rows into a schema migrated to the backup's version, in one transaction, then moves the id sequences past them. */
export async function loadPostgres(url: string, schema: string, tables: Map<string, string[]>) {
  const client = await connect(url);
  try {
    await client.query('BEGIN');
    const present = new Set(await tablesInOrder(client, schema));
    for (const table of tables.keys())
      if (!present.has(table)) throw new Error(`the backup holds rows of a table this schema version lacks: ${table}`);
    // Migrations may seed rows (the catalog); the backup's rows replace them.
    if (present.size > 0) await client.query(`TRUNCATE ${[...present].map((t) => `${q(schema)}.${q(t)}`).join(', ')}`);
    for (const [table, rows] of tables) {
      for (let i = 0; i < rows.length; i += 500) {
        await client.query(
          `INSERT INTO ${q(schema)}.${q(table)} OVERRIDING SYSTEM VALUE
           SELECT * FROM jsonb_populate_recordset(NULL::${q(schema)}.${q(table)}, $1::jsonb)`,
          [`[${rows.slice(i, i + 500).join(',')}]`],
        );
      }
    }
    const serials = await client.query<{ table_name: string; column_name: string }>(
      `SELECT table_name, column_name FROM information_schema.columns
       WHERE table_schema = $1 AND (is_identity = 'YES' OR column_default LIKE 'nextval(%')`,
      [schema],
    );
    for (const { table_name, column_name } of serials.rows) {
      const target = `${q(schema)}.${q(table_name)}`;
      await client.query(
        `SELECT setval(pg_get_serial_sequence($1, $2), coalesce((SELECT max(${q(column_name)}) FROM ${target}), 0) + 1, false)`,
        [target, column_name],
      );
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    await client.end();
  }
}

/** Undoes a failed restore: the schema goes back to empty (or away, when the restore made it). */
export async function emptySchema(url: string, schema: string, existed: boolean) {
  const client = await connect(url);
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${q(schema)} CASCADE`);
    if (existed) await client.query(`CREATE SCHEMA ${q(schema)}`);
  } finally {
    await client.end();
  }
}
