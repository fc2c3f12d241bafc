import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../src/db/database.js';
import { createCatalogService, DEFAULT_CATALOG } from '../src/services/catalog.service.js';
import {
  createToken,
  dialects,
  insertTestServer,
  registerUser,
  type TestApp,
  type TestUser,
  testApp,
  testDatabase,
} from './support.js';

for (const dialect of dialects()) {
  describe(`catalog, products and billing (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    before(async () => {
      t = await testApp(dialect);
      user = await registerUser(t.app);
    });
    after(() => t.close());

    const post = (url: string, body: unknown, cookie = user.cookie) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { cookie, 'content-type': 'application/json' },
        payload: JSON.stringify(body),
      });

    test('the catalog is public and seeded once', async () => {
      await t.app.services.catalog.seed();
      const res = await t.app.inject({ method: 'GET', url: '/api/catalog' });
      assert.equal(res.statusCode, 200);
      const { items } = res.json().data;
      assert.deepEqual(
        items.map((i: { sku: string }) => i.sku),
        DEFAULT_CATALOG.map((i) => i.sku),
      );
      assert.deepEqual(Object.keys(items[0]).sort(), [
        'currency',
        'description',
        'features',
        'id',
        'includes',
        'interval',
        'name',
        'price_cents',
        'server_limit',
        'sku',
      ]);
      assert.ok(Array.isArray(items[0].features));
    });

    test('products are added from the catalog and listed with servers_used', async () => {
      const items = (await t.app.inject({ method: 'GET', url: '/api/catalog' })).json().data.items;
      const pro = items.find((i: { sku: string }) => i.sku === 'pro');
      const added = await post('/api/products', { catalog_id: pro.id });
      assert.equal(added.statusCode, 201);
      const { product } = added.json().data;
      assert.equal(product.sku, 'pro');
      assert.equal(product.servers_used, 0);
      assert.equal(product.server_limit, 25);
      await insertTestServer(t.app, user);
      const list = await t.app.inject({ method: 'GET', url: '/api/products', headers: { cookie: user.cookie } });
      assert.equal(list.json().data.products[0].servers_used, 1);
    });

    test('bad catalog ids answer 400 naming catalog_id', async () => {
      for (const body of [{}, { catalog_id: 'x' }, { catalog_id: 1.5 }, { catalog_id: -3 }, { catalog_id: 999999 }]) {
        const res = await post('/api/products', body);
        assert.equal(res.statusCode, 400, JSON.stringify(body));
        assert.match(res.json().error, /^catalog_id: /);
      }
    });

    test('the billing summary totals the products per interval and currency', async () => {
      const other = await registerUser(t.app);
      const items = (await t.app.inject({ method: 'GET', url: '/api/catalog' })).json().data.items;
      for (const sku of ['pro', 'fleet', 'pro']) {
        await post('/api/products', { catalog_id: items.find((i: { sku: string }) => i.sku === sku).id }, other.cookie);
      }
      const res = await t.app.inject({ method: 'GET', url: '/api/billing/summary', headers: { cookie: other.cookie } });
      assert.equal(res.statusCode, 200);
      const summary = res.json().data;
      assert.equal(summary.items.length, 3);
      assert.deepEqual(summary.totals, [{ currency: 'USD', interval: 'month', amount_cents: 1900 + 9900 + 1900 }]);
    });

    test('products and billing need a session; the catalog does not', async () => {
      const token = await createToken(t.app, user);
      for (const url of ['/api/products', '/api/billing/summary', '/api/account/me']) {
        assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 401);
        assert.equal(
          (await t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } })).statusCode,
          401,
        );
      }
    });

    test('unknown routes answer a JSON 404', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/nothing-here' });
      assert.equal(res.statusCode, 404);
      assert.deepEqual(res.json(), { error: 'not found', code: 'not_found' });
    });
  });
}

if (dialects().includes('postgres')) {
  test('consoles starting together seed the catalog once, its ids 1, 2, 3 … in order (postgres)', async () => {
    const database = await testDatabase('postgres');
    const others = await Promise.all(
      [1, 2, 3, 4].map(() =>
        openDatabase({
          dataDir: database.dataDir,
          databaseUrl: database.databaseUrl,
          databaseSchema: database.databaseSchema,
        }),
      ),
    );
    try {
      // Each on its own connection, as four console processes: without turns their inserts interleave.
      await Promise.all(others.map((o) => createCatalogService({ db: o.db, clock: Date.now }).seed()));
      const rows = await database.db.selectFrom('catalog_items').select(['id', 'sku']).orderBy('id').execute();
      assert.deepEqual(
        rows.map((r) => [Number(r.id), r.sku]),
        DEFAULT_CATALOG.map((item, i) => [i + 1, item.sku]),
      );
    } finally {
      for (const o of others) await o.close();
      await database.close();
    }
  });
}
