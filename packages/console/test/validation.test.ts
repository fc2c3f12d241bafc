import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { generateToken, hasControlCharacters } from '@palisade/protocol';
import { dialects, insertTestServer, registerUser, type TestApp, type TestUser, testApp } from './support.js';

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

    test('control characters in a stored name, title, label or subject: 400 naming the field, nothing stored', async () => {
      // Over a real socket, as a browser or an agent sends it (JSON escapes carry the raw characters).
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      const send = async (method: string, path: string, body: unknown, headers: Record<string, string> = {}) => {
        const res = await fetch(base + path, {
          method,
          headers: { 'content-type': 'application/json', cookie: user.cookie, ...headers },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as { error?: string; data?: Record<string, unknown> } };
      };
      const get = async (path: string) =>
        (
          (await (await fetch(base + path, { headers: { cookie: user.cookie } })).json()) as {
            data: Record<string, unknown>;
          }
        ).data;
      const CONTROL = /: expected no control characters/;
      const product = await send('POST', '/api/products', { catalog_id: 1 });
      const productId = (product.body.data!.product as { id: number }).id;
      const server = await insertTestServer(t.app, user, { name: 'plain-name', product_id: productId });
      const enrolment = await send('POST', '/api/enrolment-tokens', { product_id: productId });
      const enrolmentToken = (enrolment.body.data as { token: string }).token;
      const bad = ['web\r\nFORGED audit line', 'nul\u0000byte', 'tab\there', 'sep\u2028line', 'del\u007f'];
      const cases: Array<{ field: string; method: string; path: string; body: (v: string) => unknown; auth?: string }> =
        [
          {
            field: 'name',
            method: 'POST',
            path: '/api/auth/register',
            body: (v) => ({ email: `c${Math.random()}@example.com`, password: 'correct horse battery', name: v }),
          },
          {
            field: 'name',
            method: 'POST',
            path: '/api/servers',
            body: (v) => ({
              product_id: productId,
              name: v,
              api_url: 'http://127.0.0.1:1',
              api_key: generateToken('agentKey'),
            }),
          },
          { field: 'name', method: 'PATCH', path: `/api/servers/${server.id}`, body: (v) => ({ name: v }) },
          {
            field: 'name',
            method: 'POST',
            path: '/api/agent/register',
            auth: enrolmentToken,
            body: (v) => ({
              name: v,
              api_key: generateToken('agentKey'),
              api_url: null,
              port: 9,
              tls: false,
              tls_fingerprint: null,
              version: '0.1.0',
              connect: 'outbound',
            }),
          },
          { field: 'name', method: 'POST', path: '/api/tokens', body: (v) => ({ name: v }) },
          { field: 'name', method: 'POST', path: '/api/keys', body: (v) => ({ name: v }) },
          {
            field: 'name',
            method: 'POST',
            path: '/api/enrolment-tokens',
            body: (v) => ({ product_id: productId, name: v }),
          },
          {
            field: 'subject',
            method: 'POST',
            path: '/api/tickets',
            body: (v) => ({ product_id: productId, subject: v, message: 'hello' }),
          },
          { field: 'label', method: 'POST', path: `/api/servers/${server.id}/benchmarks`, body: (v) => ({ label: v }) },
          { field: 'name', method: 'POST', path: '/api/alerts/channels', body: (v) => ({ name: v, kind: 'webhook' }) },
          {
            field: 'name',
            method: 'POST',
            path: '/api/alerts/rules',
            body: (v) => ({ name: v, kind: 'offline', channel_ids: [1] }),
          },
        ];
      for (const c of cases) {
        for (const v of bad) {
          const res = await send(c.method, c.path, c.body(v), c.auth ? { authorization: `Bearer ${c.auth}` } : {});
          assert.equal(res.status, 400, `${c.method} ${c.path} ${JSON.stringify(v)}: ${JSON.stringify(res.body)}`);
          assert.match(
            res.body.error ?? '',
            new RegExp(`^${c.field}${CONTROL.source}`),
            `${c.path} ${JSON.stringify(v)}`,
          );
        }
      }
      // Nothing half-stored: the lists hold only what the set-up made.
      assert.deepEqual(
        ((await get('/api/servers')).servers as Array<{ label: string }>).map((s) => s.label),
        ['plain-name'],
      );
      assert.deepEqual((await get('/api/tokens')).tokens, []);
      assert.deepEqual((await get('/api/keys')).keys, []);
      assert.equal(((await get('/api/enrolment-tokens')).tokens as unknown[]).length, 1);
      assert.deepEqual((await get('/api/tickets')).tickets, []);
      assert.deepEqual((await get('/api/alerts/channels')).channels, []);
      assert.deepEqual((await get('/api/alerts/rules')).rules, []);
      assert.deepEqual((await get(`/api/servers/${server.id}/benchmarks`)).runs, []);
      const accounts = await t.db.selectFrom('people').select('name').execute();
      assert.ok(
        accounts.every((a) => !hasControlCharacters(a.name)),
        'no account name with a control character',
      );

      // A ticket message is multi-line: line breaks stay, a NUL is refused naming the field.
      const ticket = await send('POST', '/api/tickets', {
        product_id: productId,
        subject: 'Help',
        message: 'line 1\nline 2',
      });
      assert.equal(ticket.status, 201, JSON.stringify(ticket.body));
      const ticketId = (ticket.body.data!.ticket as { id: number }).id;
      const nul = await send('POST', `/api/tickets/${ticketId}/messages`, { message: 'a\u0000b' });
      assert.equal(nul.status, 400);
      assert.match(nul.body.error ?? '', /^message: expected no NUL/);
      const thread = await get(`/api/tickets/${ticketId}`);
      const messages = (thread.ticket as { messages: Array<{ body: string }> }).messages;
      assert.deepEqual(
        messages.map((m) => m.body),
        ['line 1\nline 2'],
      );
    });
  });
}
