import { type Migration, sql } from 'kysely';
import { type AnyDb, type Dialect, withId } from './helpers.js';

/**
 * Outbound links across console processes without Redis (docs/deploy.md, "Outbound links and
 * several processes"): which process holds each server's link, and the relayed calls and answers
 * too large for a PostgreSQL NOTIFY payload. A server registered as `outbound` says so in
 * `servers.connect`, so the dashboard shows its mode before its link first comes up.
 */
export function linkRelay(dialect: Dialect): Migration {
  return {
    async up(db: AnyDb) {
      await db.schema
        .createTable('link_holders')
        .addColumn('server_id', 'bigint', (c) => c.primaryKey())
        .addColumn('process', 'text', (c) => c.notNull())
        .addColumn('expires_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema.createIndex('link_holders_process').on('link_holders').column('process').execute();
      await withId(dialect, db.schema.createTable('link_relay_messages'))
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('created_at', 'bigint', (c) => c.notNull())
        .execute();
      await db.schema
        .alterTable('servers')
        .addColumn('connect', 'text', (c) => c.notNull().defaultTo(sql`'direct'`))
        .execute();
    },
  };
}
