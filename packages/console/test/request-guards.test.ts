import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { rawRequest } from './http.js';
import { dialects, insertTestServer, registerUser, type TestApp, type TestUser, testApp } from './support.js';

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `/api/x` spelled with its first letter percent-encoded: the router decodes it to the same route. */
const encoded = (path: string) => path.replace('/api/', '/%61pi/');

for (const dialect of dialects()) {
  describe(`request guards apply to the route the router matched (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    let serverId = 0;
    before(async () => {
      t = await testApp(dialect);
      user = await registerUser(t.app);
      serverId = (await insertTestServer(t.app, user)).id;
    });
    after(() => t.close());

    test('every cookie-authenticated write is refused cross-site, also through a percent-encoded path', async () => {
      const routes = t.app.routeList.filter(
        (r) =>
          WRITES.has(r.method) &&
          r.url.startsWith('/api/') &&
          !r.url.startsWith('/api/v1/') &&
          !r.url.startsWith('/api/agent/'),
      );
      assert.ok(routes.length >= 20, `found ${routes.length} cookie-authenticated write routes`);
      for (const route of routes) {
        const path = route.url.replace(/:[a-z_]+/g, String(serverId)).replace('*', 'x');
        for (const url of [path, encoded(path)]) {
          for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'cross-site' }]) {
            const res = await t.app.inject({
              method: route.method as 'POST',
              url: `${url}?path=whitelist/clear`,
              headers: { cookie: user.cookie, 'content-type': 'application/json', ...headers },
              payload: '{}',
            });
            assert.equal(res.statusCode, 403, `${route.method} ${url} ${JSON.stringify(headers)}: ${res.body}`);
            assert.deepEqual(res.json(), { error: 'cross-site request refused', code: 'cross_site' });
            assert.equal(res.headers['cache-control'], 'no-store', `${url}: no-store`);
          }
        }
      }
    });

    test('every /api answer is no-store, nosniff and allows nothing as a page, whatever the spelling', async () => {
      for (const url of ['/api/account/me', encoded('/api/account/me'), '/api/nothing-here', '/%61pi/nothing-here']) {
        for (const cookie of [user.cookie, undefined]) {
          const res = await t.app.inject({ method: 'GET', url, headers: cookie ? { cookie } : {} });
          assert.equal(res.headers['cache-control'], 'no-store', url);
          assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
          assert.match(String(res.headers['content-security-policy']), /^default-src 'none'/, url);
        }
      }
      // Paths the router cannot even read (bad percent-encoding, an over-long id) are answered before
      // any hook runs; they are API errors all the same, and do not echo the path back.
      const long = 'x'.repeat(201);
      const unreadable: [url: string, status: number, body: object][] = [
        ['/api/%zz', 400, { error: 'path: not a valid URL (bad percent-encoding)', code: 'invalid_input' }],
        [
          '/%61pi/servers/%E0%A4%A',
          400,
          { error: 'path: not a valid URL (bad percent-encoding)', code: 'invalid_input' },
        ],
        [
          `/api/servers/${long}/control`,
          414,
          { error: 'path: a path segment is longer than 200 characters', code: 'invalid_input' },
        ],
        ['/api/v1/%zz', 400, { error: 'path: not a valid URL (bad percent-encoding)' }],
      ];
      for (const [url, status, body] of unreadable) {
        for (const method of ['GET', 'POST'] as const) {
          const res = await t.app.inject({
            method,
            url,
            headers: { cookie: user.cookie, origin: 'https://evil.example' },
          });
          assert.equal(res.statusCode, status, `${method} ${url}: ${res.body}`);
          assert.deepEqual(res.json(), body, url);
          assert.equal(res.headers['cache-control'], 'no-store', url);
          assert.equal(res.headers['x-content-type-options'], 'nosniff', url);
          assert.match(String(res.headers['content-security-policy']), /^default-src 'none'/, url);
        }
      }
      const dashboard = await t.app.inject({ method: 'GET', url: '/dashboard' });
      const pageCsp = String(dashboard.headers['content-security-policy'] ?? '');
      assert.match(pageCsp, /script-src 'self'/, 'the dashboard gets its own CSP, which lets its scripts run');
      assert.doesNotMatch(pageCsp, /unsafe-inline/);
    });

    test('a name the operator did not choose is not served (421); local names and IP literals are', async () => {
      for (const host of ['evil.example', 'rebind.attacker.test:8080', 'localhost.evil.example']) {
        const res = await t.app.inject({ method: 'GET', url: '/api/account/me', headers: { host } });
        assert.equal(res.statusCode, 421, host);
        assert.match(res.json().error, /^host: this console answers to localhost or an IP address/);
      }
      const login = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        headers: { host: 'evil.example', origin: 'http://evil.example', 'content-type': 'application/json' },
        payload: JSON.stringify({ email: user.email, password: user.password }),
      });
      assert.equal(login.statusCode, 421, 'a rebinding page cannot sign in');
      assert.equal(login.headers['set-cookie'], undefined);
      for (const host of ['localhost:8080', '127.0.0.1:8080', '[::1]:8080', '192.0.2.10', 'LOCALHOST']) {
        const res = await t.app.inject({
          method: 'GET',
          url: '/api/account/me',
          headers: { host, cookie: user.cookie },
        });
        assert.equal(res.statusCode, 200, host);
      }
    });
  });

  describe(`with PALISADE_PUBLIC_URL set, only its host and local names are served (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(dialect, { PALISADE_PUBLIC_URL: 'https://console.example.com' });
    });
    after(() => t.close());

    test('the public host and local names pass; any other name or address is 421 naming the public host', async () => {
      for (const host of ['console.example.com', 'Console.Example.Com.', 'localhost', '127.0.0.1:8080']) {
        assert.equal((await t.app.inject({ method: 'GET', url: '/api/products', headers: { host } })).statusCode, 401);
      }
      for (const host of ['evil.example', '203.0.113.9', 'console.example.com.evil.example']) {
        const res = await t.app.inject({ method: 'GET', url: '/api/products', headers: { host } });
        assert.equal(res.statusCode, 421, host);
        assert.equal(res.json().error, 'host: this console answers to console.example.com');
      }
    });
  });

  describe(`the same guards over a real socket, path bytes sent as written (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    let port = 0;
    let serverId = 0;
    before(async () => {
      t = await testApp(dialect);
      user = await registerUser(t.app);
      serverId = (await insertTestServer(t.app, user)).id;
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      port = (t.app.server.address() as AddressInfo).port;
    });
    after(() => t.close());

    test('/%61pi/... reaches the API route with its headers, and a cross-site control write through it is 403', async () => {
      const me = await rawRequest(port, 'GET', '/%61pi/account/me', { cookie: user.cookie });
      assert.equal(me.status, 200, `the router matched the encoded spelling: ${me.body}`);
      assert.equal(me.headers['cache-control'], 'no-store');
      assert.equal(me.headers['x-content-type-options'], 'nosniff');
      assert.match(String(me.headers['content-security-policy']), /^default-src 'none'/);

      const path = `/%61pi/servers/${serverId}/control?path=whitelist/clear`;
      const headers = { cookie: user.cookie, 'content-type': 'application/json' };
      const foreign = await rawRequest(port, 'POST', path, { ...headers, origin: 'https://evil.example' }, '{}');
      assert.equal(foreign.status, 403, foreign.body);
      assert.deepEqual(JSON.parse(foreign.body), { error: 'cross-site request refused', code: 'cross_site' });
      assert.equal(foreign.headers['cache-control'], 'no-store');
      // From the console's own origin the same spelling gets past the guard to the control handler.
      const own = await rawRequest(port, 'POST', path, { ...headers, origin: `http://127.0.0.1:${port}` }, '{}');
      assert.notEqual(own.status, 403, own.body);
      assert.notEqual(own.status, 404, own.body);
    });

    test('a foreign Host header is 421 naming the names served; its own address works', async () => {
      for (const method of ['GET', 'POST']) {
        const res = await rawRequest(
          port,
          method,
          method === 'GET' ? '/api/account/me' : '/api/auth/login',
          { host: 'evil.example', cookie: user.cookie, 'content-type': 'application/json' },
          method === 'GET' ? undefined : JSON.stringify({ email: user.email, password: user.password }),
        );
        assert.equal(res.status, 421, `${method}: ${res.body}`);
        assert.match(JSON.parse(res.body).error, /^host: this console answers to localhost or an IP address/);
        assert.equal(res.headers['set-cookie'], undefined);
      }
      const ok = await rawRequest(port, 'GET', '/api/account/me', { cookie: user.cookie });
      assert.equal(ok.status, 200, ok.body);
    });
  });
}
