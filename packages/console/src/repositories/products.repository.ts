import type { Database } from '../db/schema.js';

function productsWithCatalog(db: Database) {
  return db
    .selectFrom('products')
    .innerJoin('catalog_items', 'catalog_items.id', 'products.catalog_id')
    .select((eb) => [
      'products.id',
      'products.account_id',
      'products.catalog_id',
      'products.created_at',
      'catalog_items.sku',
      'catalog_items.name',
      'catalog_items.price_cents',
      'catalog_items.currency',
      'catalog_items.interval',
      'catalog_items.server_limit',
      eb
        .selectFrom('servers')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('servers.product_id', '=', 'products.id')
        .as('servers_used'),
    ]);
}

export async function listProducts(db: Database, accountId: number) {
  return productsWithCatalog(db).where('products.account_id', '=', accountId).orderBy('products.id').execute();
}

export async function findProduct(db: Database, accountId: number, id: number) {
  return productsWithCatalog(db)
    .where('products.account_id', '=', accountId)
    .where('products.id', '=', id)
    .executeTakeFirst();
}

export async function insertProduct(
  db: Database,
  product: { account_id: number; catalog_id: number; created_at: number },
) {
  return db.insertInto('products').values(product).returning('id').executeTakeFirstOrThrow();
}
