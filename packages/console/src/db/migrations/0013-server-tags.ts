import { type Migration, sql } from 'kysely';
import type { AnyDb } from './helpers.js';

/** The user's tags for each server, a JSON array (docs/fleet.md, "Tags"). */
export const serverTags: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('servers')
      .addColumn('tags', 'text', (c) => c.notNull().defaultTo(sql`'[]'`))
      .execute();
  },
};
