import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * What a fleet may hold (docs/protection.md, "What a fleet may hold"): `fleet_policies.allow_private`
 * (reported bans of private addresses propagate only when a policy opts in), and
 * `fleet_ban_reports`, one row per server: the minute its reported bans are counted in (at most
 * REPORTED_BANS_PER_MINUTE considered) and the bans refused so far, by reason, for the server's page.
 */
export const fleetBanLimits = (): Migration => ({
  async up(db: AnyDb) {
    await db.schema
      .alterTable('fleet_policies')
      .addColumn('allow_private', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createTable('fleet_ban_reports')
      .addColumn('server_id', 'bigint', (c) => c.primaryKey().references('servers.id').onDelete('cascade'))
      .addColumn('window_start', 'bigint', (c) => c.notNull())
      .addColumn('window_count', 'integer', (c) => c.notNull())
      .addColumn('refused', 'text', (c) => c.notNull()) // JSON: { reason: count }
      .addColumn('refused_total', 'bigint', (c) => c.notNull())
      .addColumn('last_refused_at', 'bigint')
      .addColumn('last_refused', 'text')
      .execute();
  },
});
