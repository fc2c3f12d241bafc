import type { Database } from '../db/schema.js';
import { badRequest, notFound } from '../errors.js';
import { countCatalog, findCatalogItem, insertCatalogItem, listCatalog } from '../repositories/catalog.repository.js';
import { findProduct, insertProduct, listProducts } from '../repositories/products.repository.js';

export const DEFAULT_CATALOG = [
  {
    sku: 'starter',
    name: 'Starter',
    description: 'Watch and protect a few servers.',
    price_cents: 0,
    currency: 'USD',
    interval: 'month' as const,
    server_limit: 3,
    features: ['Health score and live metrics', 'Allow and block lists', 'Attack webhooks'],
  },
  {
    sku: 'pro',
    name: 'Pro',
    description: 'For a team running a small fleet.',
    price_cents: 1900,
    currency: 'USD',
    interval: 'month' as const,
    server_limit: 25,
    features: ['Everything in Starter', 'Benchmarks with verification', 'Blocklist feeds and geo rules'],
  },
  {
    sku: 'fleet',
    name: 'Fleet',
    description: 'Large fleets with priority support.',
    price_cents: 9900,
    currency: 'USD',
    interval: 'month' as const,
    server_limit: 250,
    features: ['Everything in Pro', 'Priority support tickets', 'Several console processes'],
  },
];

type CatalogRow = Awaited<ReturnType<typeof listCatalog>>[number];

export function catalogView(row: CatalogRow) {
  return {
    id: row.id,
    sku: row.sku,
    name: row.name,
    description: row.description,
    price_cents: row.price_cents,
    currency: row.currency,
    interval: row.interval,
    server_limit: row.server_limit,
    features: JSON.parse(row.features) as string[],
  };
}

type ProductRow = Awaited<ReturnType<typeof listProducts>>[number];

function productView(row: ProductRow) {
  return {
    id: row.id,
    catalog_id: row.catalog_id,
    sku: row.sku,
    name: row.name,
    price_cents: row.price_cents,
    currency: row.currency,
    interval: row.interval,
    server_limit: row.server_limit,
    servers_used: Number(row.servers_used ?? 0),
    created_at: row.created_at,
  };
}

export function createCatalogService({ db, clock }: { db: Database; clock: () => number }) {
  return {
    /** Seeds the default catalog on first start; a no-op once any item exists. */
    async seed() {
      if ((await countCatalog(db)) > 0) return;
      for (const item of DEFAULT_CATALOG) {
        await insertCatalogItem(db, { ...item, features: JSON.stringify(item.features), created_at: clock() });
      }
    },

    async catalog() {
      return (await listCatalog(db)).map(catalogView);
    },

    async addCatalogItem(item: (typeof DEFAULT_CATALOG)[number]) {
      const row = await insertCatalogItem(db, {
        ...item,
        features: JSON.stringify(item.features),
        created_at: clock(),
      });
      if (!row) throw badRequest(`sku: ${item.sku} is already in the catalog`);
      return catalogView(row);
    },

    async products(accountId: number) {
      return (await listProducts(db, accountId)).map(productView);
    },

    async product(accountId: number, id: number) {
      const row = await findProduct(db, accountId, id);
      if (!row) throw notFound('product');
      return productView(row);
    },

    async addProduct(accountId: number, catalogId: number) {
      if (!(await findCatalogItem(db, catalogId))) throw badRequest('catalog_id: no catalog item with this id');
      const { id } = await insertProduct(db, { account_id: accountId, catalog_id: catalogId, created_at: clock() });
      return productView((await findProduct(db, accountId, id))!);
    },

    /** What the account's products cost, per billing interval and currency. */
    async billingSummary(accountId: number) {
      const products = (await listProducts(db, accountId)).map(productView);
      const totals = new Map<string, { currency: string; interval: string; amount_cents: number }>();
      for (const p of products) {
        const key = `${p.currency}/${p.interval}`;
        const total = totals.get(key) ?? { currency: p.currency, interval: p.interval, amount_cents: 0 };
        total.amount_cents += p.price_cents;
        totals.set(key, total);
      }
      return {
        items: products.map((p) => ({
          product_id: p.id,
          sku: p.sku,
          name: p.name,
          price_cents: p.price_cents,
          currency: p.currency,
          interval: p.interval,
          servers_used: p.servers_used,
          server_limit: p.server_limit,
        })),
        totals: [...totals.values()],
      };
    },
  };
}

export type CatalogService = ReturnType<typeof createCatalogService>;
