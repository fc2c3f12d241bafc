import { type Migration, sql } from 'kysely';
import type { AnyDb } from './helpers.js';

/** What the seeded plans advertised before the console enforced them (docs/decisions.md, "Plans that tell the truth"). */
const OLD_FEATURES: Record<string, { old: string[]; now: string[] }> = {
  starter: {
    old: ['Health score and live metrics', 'Allow and block lists', 'Attack webhooks'],
    now: ['Health score and live metrics', 'Allow and block lists, blocklist feeds and geo rules', 'Attack webhooks'],
  },
  pro: {
    old: ['Everything in Starter', 'Benchmarks with verification', 'Blocklist feeds and geo rules'],
    now: ['Everything in Starter', 'Benchmarks with verification'],
  },
  fleet: {
    old: ['Everything in Pro', 'Priority support tickets', 'Several console processes'],
    now: ['Everything in Pro', 'Up to 250 servers'],
  },
};

/**
 * Plans that tell the truth (docs/decisions.md, "Plans that tell the truth"): what each catalog item includes, as keys the console
 * enforces (`benchmarks`); a removed product stays (its tickets point at it) with `removed_at` set;
 * `free_slot` is 1 on the account's one product of a free plan and null otherwise, so a unique index
 * keeps it to one at a time even when two requests race. Paging (docs/api.md, "Lists that page")
 * walks tickets by (updated_at, id), security events by (created_at, id), deliveries by (at, id).
 */
export const plansAndPaging: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('catalog_items')
      .addColumn('includes', 'text', (c) => c.notNull().defaultTo(sql`'[]'`))
      .execute();
    // Paid plans that exist already keep every capability they had.
    await sql`UPDATE catalog_items SET includes = '["benchmarks"]' WHERE price_cents > 0`.execute(db);
    for (const [sku, { old, now }] of Object.entries(OLD_FEATURES)) {
      await sql`UPDATE catalog_items SET features = ${JSON.stringify(now)} WHERE sku = ${sku} AND features = ${JSON.stringify(old)}`.execute(
        db,
      );
    }

    // Priority support is not a thing this console does; the seeded Fleet plan stops promising it.
    await sql`UPDATE catalog_items SET description = 'Large fleets, with room to grow.'
      WHERE sku = 'fleet' AND description = 'Large fleets with priority support.'`.execute(db);

    await db.schema.alterTable('products').addColumn('removed_at', 'bigint').execute();
    await db.schema.alterTable('products').addColumn('free_slot', 'integer').execute();
    await sql`UPDATE products SET free_slot = 1 WHERE id IN (
      SELECT MIN(p.id) FROM products p JOIN catalog_items c ON c.id = p.catalog_id
      WHERE c.price_cents = 0 GROUP BY p.account_id)`.execute(db);
    await db.schema
      .createIndex('products_free_slot')
      .on('products')
      .columns(['account_id', 'free_slot'])
      .unique()
      .execute();

    // The account's tickets page on tickets_account (account_id, updated_at); the admins' view on this one.
    await db.schema.createIndex('tickets_updated').on('tickets').columns(['updated_at', 'id']).execute();
  },
};
