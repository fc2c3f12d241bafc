import {
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Kysely,
  PostgresDialect,
  type SchemaMetadata,
  sql,
  type TableMetadata,
} from 'kysely';

interface ColumnRow {
  table: string;
  is_view: boolean;
  column: string | null;
  data_type: string | null;
  not_null: boolean | null;
  has_default: boolean | null;
  auto_incrementing: boolean | null;
}

/**
 * Kysely's PostgreSQL introspector, which its Migrator uses to see whether the migration tables
 * exist, reads every schema in the database and calls `has_schema_privilege` and
 * `pg_get_serial_sequence` with each schema's *name*. Those functions look the name up again
 * outside the query's snapshot, so a schema another process drops while the query runs fails it
 * with `schema "…" does not exist` — seen when parallel test files each open and drop their own
 * schema. This one reads only the connection's own schema (`current_schema()`, set by the pool's
 * `search_path`), and only by oid.
 */
export class SchemaScopedIntrospector implements DatabaseIntrospector {
  constructor(private readonly db: Kysely<unknown>) {}

  async getSchemas(): Promise<SchemaMetadata[]> {
    const { rows } = await sql<{ name: string }>`SELECT nspname AS name FROM pg_catalog.pg_namespace`.execute(this.db);
    return rows;
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow & { schema: string }>`
      SELECT ns.nspname AS schema, c.relname AS table, c.relkind = 'v' AS is_view,
             a.attname AS column, format_type(a.atttypid, a.atttypmod) AS data_type,
             a.attnotnull AS not_null, a.atthasdef AS has_default,
             (a.attidentity <> '' OR pg_get_expr(d.adbin, d.adrelid) LIKE 'nextval(%') AS auto_incrementing
        FROM pg_catalog.pg_class c
        JOIN pg_catalog.pg_namespace ns ON ns.oid = c.relnamespace
        LEFT JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
        LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
       WHERE ns.nspname = current_schema() AND c.relkind IN ('r', 'v', 'p')
       ORDER BY c.relname, a.attnum`.execute(this.db);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      if (!options.withInternalKyselyTables && row.table.startsWith('kysely_')) continue;
      let table = tables.get(row.table);
      if (!table) {
        table = { name: row.table, schema: row.schema, isView: row.is_view, columns: [] };
        tables.set(row.table, table);
      }
      if (row.column === null) continue;
      table.columns.push({
        name: row.column,
        dataType: row.data_type ?? '',
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default === true,
        isAutoIncrementing: row.auto_incrementing === true,
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}

/** PostgreSQL as Kysely's dialect, introspecting only the connection's own schema (above). */
export class ScopedPostgresDialect extends PostgresDialect {
  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new SchemaScopedIntrospector(db);
  }
}
