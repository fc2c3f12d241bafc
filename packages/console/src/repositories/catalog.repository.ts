import { type Insertable, sql } from 'kysely';
import type { CatalogItemsTable, Database } from '../db/schema.js';
import { isPostgres } from './dialect.js';

export async function listCatalog(db: Database) {
  return db.selectFrom('catalog_items').selectAll().orderBy('price_cents').orderBy('id').execute();
}

export async function findCatalogItem(db: Database, id: number) {
  return db.selectFrom('catalog_items').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countCatalog(db: Database) {
  const row = await db
    .selectFrom('catalog_items')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertCatalogItem(db: Database, item: Insertable<CatalogItemsTable>) {
  return db
    .insertInto('catalog_items')
    .values(item)
    .onConflict((oc) => oc.column('sku').doNothing())
    .returningAll()
    .executeTakeFirst();
}

/**
 * Consoles starting together take turns at seeding, until the transaction ends: one of them seeds,
 * the others find the catalog there. Without it their inserts interleave, and as PostgreSQL spends
 * a sequence value on each insert that loses to another's, the defaults' ids have gaps.
 */
export async function lockCatalogSeeding(trx: Database) {
  if (isPostgres(trx))
    await sql`SELECT pg_advisory_xact_lock(hashtext('palisade-seed:' || current_schema()))`.execute(trx);
}
