import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dialects, insertTestServer, json, registerUser, type TestApp, type TestUser, testApp } from './support.js';

for (const dialect of dialects()) {
  describe(`plans that tell the truth (${dialect})`, () => {
    let t: TestApp;
    let sku: Record<string, number>;
    before(async () => {
      t = await testApp(dialect);
      await t.app.services.catalog.seed();
      const items = (await t.app.inject({ method: 'GET', url: '/api/catalog' })).json().data.items;
      sku = Object.fromEntries(items.map((i: { sku: string; id: number }) => [i.sku, i.id]));
    });
    after(() => t.close());

    const call = (user: TestUser, method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) =>
      t.app.inject({
        method,
        url,
        ...(body === undefined
          ? { headers: { cookie: user.cookie } }
          : { ...json(body), headers: { ...json(body).headers, cookie: user.cookie } }),
      });
    const add = async (user: TestUser, item: string) => call(user, 'POST', '/api/products', { catalog_id: sku[item] });

    test('the catalog says what each plan includes; only paid plans include benchmarks', async () => {
      const items = (await t.app.inject({ method: 'GET', url: '/api/catalog' })).json().data.items;
      const includes = Object.fromEntries(items.map((i: { sku: string; includes: string[] }) => [i.sku, i.includes]));
      assert.deepEqual(includes, { starter: [], pro: ['benchmarks'], fleet: ['benchmarks'] });
    });

    test('the free plan is taken once at a time: a second one is a 409 naming the rule, also when two race', async () => {
      const user = await registerUser(t.app);
      const first = await add(user, 'starter');
      assert.equal(first.statusCode, 201);
      const second = await add(user, 'starter');
      assert.equal(second.statusCode, 409);
      assert.match(
        second.json().error,
        /^catalog_id: one free plan per account at a time, and this account already has Starter \(product \d+\)/,
      );
      assert.equal((await add(user, 'pro')).statusCode, 201, 'paid plans are not limited');
      assert.equal((await add(user, 'pro')).statusCode, 201);

      const racer = await registerUser(t.app);
      const answers = await Promise.all([add(racer, 'starter'), add(racer, 'starter'), add(racer, 'starter')]);
      assert.deepEqual(answers.map((a) => a.statusCode).sort(), [201, 409, 409]);
      const products = (await call(racer, 'GET', '/api/products')).json().data.products;
      assert.equal(products.length, 1);

      // Removed, it can be taken again: one at a time, not once ever (docs/decisions.md).
      assert.equal((await call(user, 'DELETE', `/api/products/${first.json().data.product.id}`)).statusCode, 200);
      assert.equal((await add(user, 'starter')).statusCode, 201);
    });

    test('a product is removed only when no server uses it and no enrolment token can still add one', async () => {
      const user = await registerUser(t.app);
      const product = (await add(user, 'pro')).json().data.product;
      const server = await insertTestServer(t.app, user, { product_id: product.id });
      const ticket = await call(user, 'POST', '/api/tickets', {
        product_id: product.id,
        subject: 'Billing',
        message: 'm',
      });
      assert.equal(ticket.statusCode, 201);

      const busy = await call(user, 'DELETE', `/api/products/${product.id}`);
      assert.equal(busy.statusCode, 409);
      assert.equal(
        busy.json().error,
        `product: Pro (product ${product.id}) still has servers; remove them or move them to another product first`,
      );

      assert.equal((await call(user, 'DELETE', `/api/servers/${server.id}`)).statusCode, 200);
      const token = await call(user, 'POST', '/api/enrolment-tokens', { product_id: product.id });
      assert.equal(token.statusCode, 201, token.body);
      const pending = await call(user, 'DELETE', `/api/products/${product.id}`);
      assert.equal(pending.statusCode, 409);
      assert.match(
        pending.json().error,
        /^product: 1 enrolment token can still add servers to Pro .*; revoke it first$/,
      );
      assert.equal((await call(user, 'DELETE', `/api/enrolment-tokens/${token.json().data.id}`)).statusCode, 200);

      const stranger = await registerUser(t.app);
      assert.equal(
        (await call(stranger, 'DELETE', `/api/products/${product.id}`)).statusCode,
        404,
        "another account's",
      );
      assert.equal((await call(user, 'DELETE', '/api/products/0x1')).statusCode, 404);

      assert.equal((await call(user, 'DELETE', `/api/products/${product.id}`)).statusCode, 200);
      assert.equal((await call(user, 'DELETE', `/api/products/${product.id}`)).statusCode, 404, 'once');
      assert.deepEqual((await call(user, 'GET', '/api/products')).json().data.products, []);
      assert.deepEqual((await call(user, 'GET', '/api/billing/summary')).json().data, { items: [], totals: [] });
      // Its ticket stays readable; a new ticket or server on it is refused as for any unknown product.
      assert.equal((await call(user, 'GET', `/api/tickets/${ticket.json().data.ticket.id}`)).statusCode, 200);
      const again = await call(user, 'POST', '/api/tickets', { product_id: product.id, subject: 'x', message: 'm' });
      assert.equal(again.statusCode, 400);
      assert.match(again.json().error, /^product_id: /);
    });

    test('benchmarks run only where the server’s plan includes them: 403 naming the plan', async () => {
      const user = await registerUser(t.app);
      const starter = (await add(user, 'starter')).json().data.product;
      const pro = (await add(user, 'pro')).json().data.product;
      const free = await insertTestServer(t.app, user, { product_id: starter.id, name: 'free-1' });
      const paid = await insertTestServer(t.app, user, { product_id: pro.id, name: 'paid-1' });

      const refused = await call(user, 'POST', `/api/servers/${free.id}/benchmarks`, { label: 'x' });
      assert.equal(refused.statusCode, 403);
      assert.equal(
        refused.json().error,
        'benchmarks are not in the Starter plan; they come with Pro or Fleet: add that product and move the server to it',
      );
      assert.deepEqual((await call(user, 'GET', `/api/servers/${free.id}/benchmarks`)).json().data.runs, []);
      assert.equal((await call(user, 'POST', `/api/servers/${paid.id}/benchmarks`, { label: 'x' })).statusCode, 201);
    });
  });
}
