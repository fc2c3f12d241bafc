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
      'catalog_items.includes',
      eb
        .selectFrom('servers')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('servers.product_id', '=', 'products.id')
        .as('servers_used'),
    ])
    .where('products.removed_at', 'is', null);
}

/** The account's products; removed ones are not listed (docs/decisions.md, "Plans that tell the truth"). */
export async function listProducts(db: Database, accountId: number) {
  return productsWithCatalog(db).where('products.account_id', '=', accountId).orderBy('products.id').execute();
}

export async function findProduct(db: Database, accountId: number, id: number) {
  return productsWithCatalog(db)
    .where('products.account_id', '=', accountId)
    .where('products.id', '=', id)
    .executeTakeFirst();
}

/** Adds a product; `free_slot` 1 for a free plan, which the unique index keeps to one per account. */
export async function insertProduct(
  db: Database,
  product: { account_id: number; catalog_id: number; created_at: number; free_slot: 1 | null },
) {
  return db.insertInto('products').values(product).returning('id').executeTakeFirstOrThrow();
}

/** Enrolment tokens of a product that can still enrol a server: not revoked, not expired, uses left. */
export async function countUsableEnrolmentTokens(db: Database, productId: number, now: number) {
  const row = await db
    .selectFrom('enrolment_tokens')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('product_id', '=', productId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .whereRef('uses', '<', 'max_uses')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/**
 * Marks a product removed, only while no server uses it (checked in the same statement, so a server
 * added meanwhile keeps it); frees the account's free-plan slot. Whether a row was removed.
 */
export async function removeProduct(db: Database, accountId: number, id: number, now: number) {
  const result = await db
    .updateTable('products')
    .set({ removed_at: now, free_slot: null })
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('removed_at', 'is', null)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('servers').select('servers.id').whereRef('servers.product_id', '=', 'products.id'))),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
