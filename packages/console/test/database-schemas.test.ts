import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { openDatabase } from '../src/db/database.js';
import { runPreparedOnPostgres } from '../src/repositories/compiled.js';
import { dialects, dropSchema, testDatabase } from './support.js';

// Several consoles (and the test files) share one PostgreSQL database, each in its own schema.
// Opening one must not depend on the others: packages/console/src/db/postgres-introspector.ts.
if (dialects().includes('postgres')) {
  describe('a console schema among others (postgres)', () => {
    test('the migrator sees only its own schema, even when another is dropped while it looks', async () => {
      const url = process.env.PALISADE_TEST_DATABASE_URL!;
      const database = await testDatabase('postgres');
      const other = `o_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        await client.query(`CREATE SCHEMA "${other}"`);
        await client.query(`CREATE TABLE "${other}".servers (id serial PRIMARY KEY)`);
        const tables = await database.db
          .transaction()
          .setIsolationLevel('repeatable read')
          .execute(async (trx) => {
            await sql`SELECT 1`.execute(trx); // the snapshot still holds the other schema's tables
            await client.query(`DROP SCHEMA "${other}" CASCADE`);
            return trx.introspection.getTables({ withInternalKyselyTables: true });
          });
        const names = tables.map((t) => `${t.schema}.${t.name}`);
        assert.ok(names.includes(`${database.databaseSchema}.kysely_migration`), names.join(', '));
        assert.ok(names.includes(`${database.databaseSchema}.servers`), names.join(', '));
        assert.ok(
          tables.every((t) => t.schema === database.databaseSchema),
          `only its own schema: ${names.join(', ')}`,
        );
        const id = tables.find((t) => t.name === 'servers')?.columns.find((c) => c.name === 'id');
        assert.equal(id?.isNullable, false);
      } finally {
        await client.end();
        await dropSchema(url, other);
        await database.close();
      }
    });
  });

  test("servers' pages are filled to 40 %, so a check-in's update of its row stays on its page", async () => {
    const database = await testDatabase('postgres');
    try {
      const { rows } = await sql<{ reloptions: string[] | null }>`
        SELECT c.reloptions FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE c.relname = 'servers' AND n.nspname = current_schema()`.execute(database.db);
      assert.deepEqual(rows[0]?.reloptions, ['fillfactor=40']);
    } finally {
      await database.close();
    }
  });

  describe('prepared statements (postgres)', () => {
    // Off unless set on: a pooler in transaction mode without prepared-statement support (PgBouncer
    // before 1.21, or without max_prepared_statements) would hand a connection's statements to
    // others (docs/console.md, PALISADE_DATABASE_PREPARED_STATEMENTS).
    for (const setting of [undefined, true] as const) {
      test(`the hot statements ${setting === true ? 'are prepared when set on' : 'run unnamed by default'}`, async () => {
        const url = process.env.PALISADE_TEST_DATABASE_URL!;
        const schema = `p_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
        const handle = await openDatabase({
          dataDir: '/nonexistent',
          databaseUrl: url,
          databaseSchema: schema,
          ...(setting === undefined ? {} : { databasePreparedStatements: setting }),
        });
        try {
          const prepared = await handle.db.connection().execute(async (conn) => {
            const [row] = await runPreparedOnPostgres(conn, sql<{ one: number }>`SELECT ${1}::int AS one`);
            assert.equal(row?.one, 1);
            const { rows } = await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(
              conn,
            );
            return rows.map((r) => r.statement);
          });
          if (setting === undefined) assert.deepEqual(prepared, []);
          else
            assert.ok(
              prepared.some((text) => text.includes('AS one')),
              JSON.stringify(prepared),
            );
        } finally {
          await handle.close();
          await dropSchema(url, schema);
        }
      });
    }
  });
}
