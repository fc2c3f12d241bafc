import type { Insertable } from 'kysely';
import type { CatalogItemsTable, Database } from '../db/schema.js';

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
