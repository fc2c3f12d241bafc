import type { Database } from '../db/schema.js';
import { badRequest, conflict, forbidden, isUniqueViolation, notFound } from '../errors.js';
import { parseJson } from '../json.js';
import {
  countCatalog,
  findCatalogItem,
  insertCatalogItem,
  listCatalog,
  lockCatalogSeeding,
} from '../repositories/catalog.repository.js';
import {
  countUsableEnrolmentTokens,
  findProduct,
  insertProduct,
  listProducts,
  removeProduct,
} from '../repositories/products.repository.js';

/**
 * What a plan can include that the console enforces (docs/decisions.md, "Plans that tell the truth").
 * The catalog's `features` are words for people; every one of them is either true of every plan or
 * backed by one of these keys.
 */
export const PLAN_CAPABILITIES = ['benchmarks'] as const;
export type PlanCapability = (typeof PLAN_CAPABILITIES)[number];

export const DEFAULT_CATALOG = [
  {
    sku: 'starter',
    name: 'Starter',
    description: 'Watch and protect a few servers.',
    price_cents: 0,
    currency: 'USD',
    interval: 'month' as const,
    server_limit: 3,
    features: [
      'Health score and live metrics',
      'Allow and block lists, blocklist feeds and geo rules',
      'Attack webhooks',
    ],
    includes: [] as PlanCapability[],
  },
  {
    sku: 'pro',
    name: 'Pro',
    description: 'For a team running a small fleet.',
    price_cents: 1900,
    currency: 'USD',
    interval: 'month' as const,
    server_limit: 25,
    features: ['Everything in Starter', 'Benchmarks with verification'],
    includes: ['benchmarks'] as PlanCapability[],
  },
  {
    sku: 'fleet',
    name: 'Fleet',
    description: 'Large fleets, with room to grow.',
    price_cents: 9900,
    currency: 'USD',
    interval: 'month' as const,
    server_limit: 250,
    features: ['Everything in Pro', 'Up to 250 servers'],
    includes: ['benchmarks'] as PlanCapability[],
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
    features: parseJson<string[]>(row.features, []),
    includes: capabilities(row.includes),
  };
}

function capabilities(json: string): PlanCapability[] {
  const value = parseJson<unknown>(json, []);
  return Array.isArray(value) ? PLAN_CAPABILITIES.filter((c) => value.includes(c)) : [];
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
    includes: capabilities(row.includes),
    created_at: row.created_at,
  };
}

export function createCatalogService({ db, clock }: { db: Database; clock: () => number }) {
  return {
    /** Seeds the default catalog on first start; a no-op once any item exists. */
    async seed() {
      await db.transaction().execute(async (trx) => {
        await lockCatalogSeeding(trx);
        if ((await countCatalog(trx)) > 0) return;
        for (const item of DEFAULT_CATALOG) {
          await insertCatalogItem(trx, {
            ...item,
            features: JSON.stringify(item.features),
            includes: JSON.stringify(item.includes),
            created_at: clock(),
          });
        }
      });
    },

    async catalog() {
      return (await listCatalog(db)).map(catalogView);
    },

    async addCatalogItem(item: (typeof DEFAULT_CATALOG)[number]) {
      const row = await insertCatalogItem(db, {
        ...item,
        features: JSON.stringify(item.features),
        includes: JSON.stringify(item.includes),
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

    /** Adds a product; a free plan once at a time per account (docs/decisions.md, "Plans that tell the truth"). */
    async addProduct(accountId: number, catalogId: number) {
      const item = await findCatalogItem(db, catalogId);
      if (!item) throw badRequest('catalog_id: no catalog item with this id');
      const free = item.price_cents === 0;
      try {
        const { id } = await insertProduct(db, {
          account_id: accountId,
          catalog_id: catalogId,
          created_at: clock(),
          free_slot: free ? 1 : null,
        });
        return productView((await findProduct(db, accountId, id))!);
      } catch (err) {
        if (!free || !isUniqueViolation(err)) throw err;
        const held = (await listProducts(db, accountId)).find((p) => p.price_cents === 0);
        throw conflict(
          `catalog_id: one free plan per account at a time, and this account already has ${held ? `${held.name} (product ${held.id})` : 'one'}; remove it first or choose a paid plan`,
        );
      }
    },

    /** Removes a product that no server uses and no enrolment token can still add a server to. */
    async removeProduct(accountId: number, id: number) {
      const product = await findProduct(db, accountId, id);
      if (!product) throw notFound('product');
      const inUse = () =>
        conflict(
          `product: ${product.name} (product ${id}) still has servers; remove them or move them to another product first`,
        );
      if (Number(product.servers_used ?? 0) > 0) throw inUse();
      const now = clock();
      const tokens = await countUsableEnrolmentTokens(db, id, now);
      if (tokens > 0) {
        throw conflict(
          `product: ${tokens} enrolment token${tokens === 1 ? '' : 's'} can still add servers to ${product.name} (product ${id}); revoke ${tokens === 1 ? 'it' : 'them'} first`,
        );
      }
      if (!(await removeProduct(db, accountId, id, now))) throw inUse();
    },

    /** 403 unless the plan of the product holds `capability`, naming the plan and what to do. */
    async requireCapability(accountId: number, productId: number, capability: PlanCapability, what: string) {
      const product = await findProduct(db, accountId, productId);
      if (product && capabilities(product.includes).includes(capability)) return;
      const plans = (await listCatalog(db)).filter((i) => capabilities(i.includes).includes(capability));
      throw forbidden(
        `${what} ${product ? `are not in the ${product.name} plan` : 'need a product'}; ${plans.length > 0 ? `they come with ${plans.map((p) => p.name).join(' or ')}: add that product and move the server to it` : 'no plan in this catalog includes them'}`,
      );
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
