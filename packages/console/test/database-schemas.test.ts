import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
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
}
