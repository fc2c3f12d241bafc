import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dialects, registerUser, type TestApp, type TestUser, testApp } from './support.js';

for (const dialect of dialects()) {
  describe(`error texts for bad input (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    before(async () => {
      t = await testApp(dialect);
      user = await registerUser(t.app);
    });
    after(() => t.close());

    const post = (url: string, payload: string) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { cookie: user.cookie, 'content-type': 'application/json' },
        payload,
      });

    test('a __proto__ or constructor.prototype key is refused by name, not as invalid JSON', async () => {
      const cases: [string, string][] = [
        ['{"catalog_id": 1, "__proto__": {"admin": true}}', 'body: the key __proto__ is not allowed'],
        ['{"catalog_id": 1, "x": {"__proto__": {}}}', 'body: the key __proto__ is not allowed'],
        ['{"catalog_id": 1, "constructor": {"prototype": {}}}', 'body: the key constructor.prototype is not allowed'],
      ];
      for (const [payload, error] of cases) {
        const res = await post('/api/products', payload);
        assert.equal(res.statusCode, 400, payload);
        assert.deepEqual(res.json(), { error, code: 'invalid_input' }, payload);
      }
      const broken = await post('/api/products', '{"catalog_id": 1,');
      assert.equal(broken.statusCode, 400);
      assert.match(broken.json().error, /not valid JSON/, 'real syntax errors still say so');
      const products = await t.app.inject({ method: 'GET', url: '/api/products', headers: { cookie: user.cookie } });
      assert.equal(products.json().data.products.length, 0, 'nothing was stored');
    });

    test('catalog_id of the wrong type says a positive integer is expected; missing says required', async () => {
      const cases: [string, string][] = [
        ['{"catalog_id": 1.5}', 'catalog_id: expected a positive integer'],
        ['{"catalog_id": "1"}', 'catalog_id: expected a positive integer'],
        ['{"catalog_id": null}', 'catalog_id: expected a positive integer'],
        ['{"catalog_id": -3}', 'catalog_id: expected a positive integer'],
        ['{}', 'catalog_id: is required'],
      ];
      for (const [payload, error] of cases) {
        const res = await post('/api/products', payload);
        assert.equal(res.statusCode, 400, payload);
        assert.deepEqual(res.json(), { error, code: 'invalid_input' }, payload);
      }
    });

    test('every required field tells missing apart from the wrong type', async () => {
      const cases: [string, string, string][] = [
        ['/api/tokens', '{}', 'name: is required'],
        ['/api/tokens', '{"name": null}', 'name: expected a string, got null'],
        ['/api/tokens', '{"name": 5}', 'name: expected a string, got a number'],
        ['/api/tokens', '{"name": ["x"]}', 'name: expected a string, got an array'],
        ['/api/tickets', '{"subject": "s", "message": "m"}', 'product_id: is required'],
        ['/api/tickets', '{"product_id": "1", "subject": "s", "message": "m"}', 'product_id: expected an integer'],
        ['/api/tickets', '{"product_id": null, "subject": "s", "message": "m"}', 'product_id: expected an integer'],
      ];
      for (const [url, payload, error] of cases) {
        const res = await post(url, payload);
        assert.equal(res.statusCode, 400, `${url} ${payload}`);
        assert.deepEqual(res.json(), { error, code: 'invalid_input' }, `${url} ${payload}`);
      }
    });
  });
}
