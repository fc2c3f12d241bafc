import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * What the console's own calls to a server's agent last did (so a server that checks in but does not
 * answer shows as unreachable), and the active attack count of its latest check-in (docs/fleet.md,
 * "Server states").
 */
export const serverReachability: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('servers').addColumn('last_call_ok_at', 'bigint').execute();
    await db.schema.alterTable('servers').addColumn('last_call_error_at', 'bigint').execute();
    await db.schema.alterTable('servers').addColumn('last_call_error', 'text').execute();
    await db.schema.alterTable('servers').addColumn('attacks_active', 'integer').execute();
  },
};
