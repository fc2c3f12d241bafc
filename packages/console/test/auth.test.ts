import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { findPersonByEmail } from '../src/repositories/people.repository.js';
import { dialects, json, registerUser, sessionCookieFrom, type TestApp, testApp, uniqueEmail } from './support.js';

for (const dialect of dialects()) {
  describe(`accounts and sessions (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(dialect);
    });
    after(() => t.close());

    test('register answers 201 with the account and a session cookie', async () => {
      const email = uniqueEmail();
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        ...json({ email, password: 'hunter2hunter2', name: 'Ada' }),
      });
      assert.equal(res.statusCode, 201);
      const { account } = res.json().data;
      assert.equal(account.email, email);
      assert.equal(account.name, 'Ada');
      assert.equal(account.role, 'user');
      assert.deepEqual(account.permissions, ['control.read', 'control.edit']);
      const cookie = String(res.headers['set-cookie']);
      assert.match(cookie, /^pl_session=[A-Za-z0-9_-]{43}; HttpOnly; SameSite=Lax; Path=\//);
      assert.doesNotMatch(cookie, /Secure/, 'no Secure flag over plain http');
      const me = await t.app.inject({
        method: 'GET',
        url: '/api/account/me',
        headers: { cookie: sessionCookieFrom(res.headers['set-cookie']) },
      });
      assert.equal(me.statusCode, 200);
      assert.equal(me.json().data.email, email);
    });

    test('the password is stored as an scrypt hash, never in clear: N=2^17 by default', async () => {
      // The suite's consoles hash at 2^12 (TEST_ENV); this one at the setting's default.
      const strong = await testApp(dialect, { PALISADE_PASSWORD_COST: String(loadConfig({}).passwordCost) });
      try {
        const user = await registerUser(strong.app);
        const row = await findPersonByEmail(strong.db, user.email);
        assert.ok(row);
        assert.match(row.password_hash, /^scrypt\$17\$8\$1\$/);
        assert.ok(!row.password_hash.includes(user.password));
      } finally {
        await strong.close();
      }
    });

    test('a hash made at a lower PALISADE_PASSWORD_COST is made again at the next sign-in, and only then', async () => {
      const user = await registerUser(t.app);
      const before = (await findPersonByEmail(t.db, user.email))!.password_hash;
      assert.match(before, /^scrypt\$12\$/);
      // The same database served by a console whose cost was raised.
      const raised = await buildApp({
        config: { ...t.config, passwordCost: 13 },
        db: t.db,
        clock: () => t.clock.now,
      });
      try {
        const login = (password: string) =>
          raised.inject({ method: 'POST', url: '/api/auth/login', ...json({ email: user.email, password }) });
        assert.equal((await login('not-the-password')).statusCode, 401);
        assert.equal(
          (await findPersonByEmail(t.db, user.email))!.password_hash,
          before,
          'a wrong password changes nothing',
        );
        assert.equal((await login(user.password)).statusCode, 200);
        const after = (await findPersonByEmail(t.db, user.email))!.password_hash;
        assert.match(after, /^scrypt\$13\$8\$1\$/);
        assert.equal((await login(user.password)).statusCode, 200, 'the new hash holds the same password');
        assert.equal(
          (await findPersonByEmail(t.db, user.email))!.password_hash,
          after,
          'made again once, not at every sign-in',
        );
      } finally {
        await raised.close();
      }
    });

    test('emails are unique regardless of case', async () => {
      const user = await registerUser(t.app);
      const res = await t.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        ...json({ email: user.email.toUpperCase(), password: 'another-password', name: 'B' }),
      });
      assert.equal(res.statusCode, 409);
      assert.equal(res.json().error, 'an account with this email already exists');
    });

    test('bad register bodies answer 400 naming the field and store nothing', async () => {
      const email = uniqueEmail();
      const cases: [unknown, RegExp][] = [
        [{ password: 'longenough', name: 'x' }, /^email: is required$/],
        [{ email: 'not-an-email', password: 'longenough', name: 'x' }, /^email: /],
        [{ email, password: 'short', name: 'x' }, /^password: at least 8 characters$/],
        [{ email, password: 'x'.repeat(257), name: 'x' }, /^password: at most 256 characters$/],
        [{ email, password: 'longenough', name: '   ' }, /^name: must not be empty$/],
        [{ email, password: 12345678, name: 'x' }, /^password: /],
        [['an', 'array'], /^body: expected a JSON object$/],
        ['a string', /^body: expected a JSON object$/],
        [null, /^body: expected a JSON object$/],
      ];
      for (const [body, message] of cases) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/auth/register',
          remoteAddress: '10.9.0.1',
          ...json(body),
        });
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)} → ${res.body}`);
        assert.match(res.json().error, message);
      }
      assert.equal(await findPersonByEmail(t.db, email), undefined);
    });

    test('malformed, empty, non-JSON and huge bodies get clear 4xx answers, never a 500', async () => {
      const cases: [Record<string, string>, string, number][] = [
        [{ 'content-type': 'application/json' }, '{"email":', 400],
        [{ 'content-type': 'application/json' }, '', 400],
        [{ 'content-type': 'application/json' }, '{"__proto__":{"x":1}}', 400],
        [{ 'content-type': 'text/plain' }, '{"email":"a@b.co"}', 415],
        [{ 'content-type': 'application/x-www-form-urlencoded' }, 'email=a%40b.co', 415],
        [{ 'content-type': 'multipart/form-data; boundary=x' }, '--x--', 415],
        [
          { 'content-type': 'application/json' },
          JSON.stringify({ email: 'a@b.co', name: 'x'.repeat(2 * 1024 * 1024) }),
          413,
        ],
      ];
      for (const [headers, payload, status] of cases) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          remoteAddress: '10.9.0.2',
          headers,
          payload,
        });
        assert.equal(res.statusCode, status, `${headers['content-type']} ${payload.slice(0, 30)} → ${res.body}`);
        assert.equal(typeof res.json().error, 'string');
        assert.doesNotMatch(res.body, /at .*\.js:\d+/, 'no stack trace');
      }
    });

    test('login sets a new session id; wrong password, unknown email and disabled account answer alike', async () => {
      const user = await registerUser(t.app);
      const ok = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '10.1.0.1',
        ...json({ email: user.email, password: user.password }),
      });
      assert.equal(ok.statusCode, 200);
      const cookie = sessionCookieFrom(ok.headers['set-cookie']);
      assert.notEqual(cookie, user.cookie, 'a fresh session id at login');

      const wrong = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '10.1.0.1',
        ...json({ email: user.email, password: 'wrong password' }),
      });
      const unknown = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '10.1.0.1',
        ...json({ email: uniqueEmail('nobody'), password: 'wrong password' }),
      });
      await t.app.services.accounts.setDisabled(user.email, true);
      const disabled = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '10.1.0.1',
        ...json({ email: user.email, password: user.password }),
      });
      for (const res of [wrong, unknown, disabled]) {
        assert.equal(res.statusCode, 401);
        assert.equal(res.body, '{"error":"invalid email or password","code":"unauthenticated"}');
        assert.equal(res.headers['set-cookie'], undefined);
      }
    });

    test('disabling an account ends its sessions at once; enabling lets it sign in again', async () => {
      const user = await registerUser(t.app);
      await t.app.services.accounts.setDisabled(user.email, true);
      const me = await t.app.inject({ method: 'GET', url: '/api/account/me', headers: { cookie: user.cookie } });
      assert.equal(me.statusCode, 401);
      await t.app.services.accounts.setDisabled(user.email, false);
      const again = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '10.1.0.9',
        ...json({ email: user.email, password: user.password }),
      });
      assert.equal(again.statusCode, 200);
    });

    test('the session route says who is signed in, and null for visitors', async () => {
      const user = await registerUser(t.app);
      const signedIn = await t.app.inject({
        method: 'GET',
        url: '/api/auth/session',
        headers: { cookie: user.cookie },
      });
      assert.equal(signedIn.json().data.account.email, user.email);
      for (const cookie of [undefined, 'pl_session=nonsense']) {
        const visitor = await t.app.inject({
          method: 'GET',
          url: '/api/auth/session',
          headers: cookie ? { cookie } : {},
        });
        assert.equal(visitor.statusCode, 200);
        assert.deepEqual(visitor.json(), { data: { account: null } });
      }
    });

    test('logout deletes the session server-side, so the old cookie stops working', async () => {
      const user = await registerUser(t.app);
      const out = await t.app.inject({ method: 'POST', url: '/api/auth/logout', headers: { cookie: user.cookie } });
      assert.equal(out.statusCode, 200);
      assert.match(String(out.headers['set-cookie']), /pl_session=; .*Max-Age=0/);
      const me = await t.app.inject({ method: 'GET', url: '/api/account/me', headers: { cookie: user.cookie } });
      assert.equal(me.statusCode, 401);
      assert.equal(me.headers['cache-control'], 'no-store');
    });

    test('sessions expire after 30 days', async () => {
      const user = await registerUser(t.app);
      t.clock.advance(30 * 24 * 3600 * 1000 + 1);
      const me = await t.app.inject({ method: 'GET', url: '/api/account/me', headers: { cookie: user.cookie } });
      assert.equal(me.statusCode, 401);
    });

    test('cross-site writes are refused with 403; same-origin ones pass', async () => {
      const user = await registerUser(t.app);
      const base = { method: 'POST' as const, url: '/api/tokens', payload: JSON.stringify({ name: 'x' }) };
      const crossOrigin = await t.app.inject({
        ...base,
        headers: {
          cookie: user.cookie,
          'content-type': 'application/json',
          host: 'localhost:8080',
          origin: 'https://evil.example',
        },
      });
      assert.equal(crossOrigin.statusCode, 403);
      assert.equal(crossOrigin.json().error, 'cross-site request refused');
      const fetchSite = await t.app.inject({
        ...base,
        headers: { cookie: user.cookie, 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
      });
      assert.equal(fetchSite.statusCode, 403);
      const sameOrigin = await t.app.inject({
        ...base,
        headers: {
          cookie: user.cookie,
          'content-type': 'application/json',
          host: 'localhost:8080',
          origin: 'http://localhost:8080',
          'sec-fetch-site': 'same-origin',
        },
      });
      assert.equal(sameOrigin.statusCode, 201);
      const tokens = await t.app.inject({ method: 'GET', url: '/api/tokens', headers: { cookie: user.cookie } });
      assert.equal(tokens.json().data.tokens.length, 1, 'the refused requests stored nothing');
    });

    test('9th login attempt from one IP within a minute answers 429 with Retry-After; other IPs are unaffected', async () => {
      const ip = '198.51.100.8';
      for (let i = 0; i < 8; i += 1) {
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          remoteAddress: ip,
          ...json({ email: 'x@example.com', password: 'wrong password' }),
        });
        assert.equal(res.statusCode, 401, `attempt ${i + 1}`);
      }
      const limited = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: ip,
        ...json({ email: 'x@example.com', password: 'wrong password' }),
      });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.body, '{"error":"too many attempts, try again later"}');
      const retry = Number(limited.headers['retry-after']);
      assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
      const other = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '198.51.100.9',
        ...json({ email: 'x@example.com', password: 'wrong password' }),
      });
      assert.equal(other.statusCode, 401);
    });

    test('probing for taken emails is capped: the 11th attempt in an hour answers 429 without saying whether it exists', async () => {
      // docs/decisions.md, "Accounts and sessions": the 409 stays; the register limit is its only guard.
      const taken = await registerUser(t.app, '198.51.100.22');
      const ip = '198.51.100.21';
      const attempt = (email: string) =>
        t.app.inject({
          method: 'POST',
          url: '/api/auth/register',
          remoteAddress: ip,
          ...json({ email, password: 'another-password', name: 'Probe' }),
        });
      for (let i = 0; i < 10; i += 1) assert.equal((await attempt(taken.email)).statusCode, 409);
      const takenAnswer = await attempt(taken.email);
      const freeAnswer = await attempt(uniqueEmail());
      assert.equal(takenAnswer.statusCode, 429);
      assert.deepEqual(takenAnswer.json(), freeAnswer.json());
    });

    test('11th registration from one IP within an hour answers 429', async () => {
      const ip = '198.51.100.20';
      for (let i = 0; i < 10; i += 1) {
        // Invalid bodies count as attempts too, and cost no scrypt work.
        const res = await t.app.inject({
          method: 'POST',
          url: '/api/auth/register',
          remoteAddress: ip,
          ...json({ email: 'bad' }),
        });
        assert.equal(res.statusCode, 400);
      }
      const limited = await t.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        remoteAddress: ip,
        ...json({ email: uniqueEmail(), password: 'longenough', name: 'x' }),
      });
      assert.equal(limited.statusCode, 429);
      assert.equal(limited.json().error, 'too many attempts, try again later');
      const retry = Number(limited.headers['retry-after']);
      assert.ok(retry > 60 && retry <= 3600, `Retry-After ${retry}`);
    });
  });
}

describe('behind a trusted proxy', () => {
  test('X-Forwarded-For names the client only from trusted proxies, and https sets Secure', async () => {
    const t = await testApp('sqlite', { PALISADE_TRUST_PROXY: '127.0.0.1' });
    try {
      // A spoofed header from an untrusted address does not escape the limit.
      for (let i = 0; i < 8; i += 1) {
        await t.app.inject({
          method: 'POST',
          url: '/api/auth/login',
          remoteAddress: '203.0.113.50',
          headers: { 'content-type': 'application/json', 'x-forwarded-for': `192.0.2.${i}` },
          payload: '{"email":"a@b.co","password":"x"}',
        });
      }
      const spoofed = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        remoteAddress: '203.0.113.50',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.99' },
        payload: '{"email":"a@b.co","password":"x"}',
      });
      assert.equal(spoofed.statusCode, 429);
      // Through the trusted proxy, the forwarded address is the client.
      const proxied = await t.app.inject({
        method: 'POST',
        url: '/api/auth/register',
        remoteAddress: '127.0.0.1',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.1', 'x-forwarded-proto': 'https' },
        payload: JSON.stringify({ email: uniqueEmail(), password: 'longenough', name: 'P' }),
      });
      assert.equal(proxied.statusCode, 201);
      assert.match(String(proxied.headers['set-cookie']), /; Secure$/);
    } finally {
      await t.close();
    }
  });
});
