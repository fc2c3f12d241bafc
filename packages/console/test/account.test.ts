import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SECURITY_EVENT_KINDS, securityEventLabel } from '@palisade/protocol';
import { totpCode, totpStep } from '@palisade/protocol/totp';
import type { FastifyInstance } from 'fastify';
import { addressKey } from '../src/plugins/rate-limits.js';
import { findPersonByEmail } from '../src/repositories/people.repository.js';
import {
  dialects,
  insertTestServer,
  json,
  registerUser,
  sessionCookieFrom,
  type TestApp,
  type TestUser,
  testApp,
} from './support.js';

const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const SAFARI_IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

let ipCounter = 0;
/** A fresh client address, so each test has its own login limit window. */
const freshIp = () => `10.77.${Math.floor(++ipCounter / 250)}.${(ipCounter % 250) + 1}`;

async function login(app: FastifyInstance, user: { email: string; password: string }, ip: string, ua = FIREFOX) {
  return app.inject({
    method: 'POST',
    url: '/api/auth/login',
    remoteAddress: ip,
    headers: { 'content-type': 'application/json', 'user-agent': ua },
    payload: JSON.stringify({ email: user.email, password: user.password }),
  });
}

/** The second sign-in step: the challenge the password step answered, and a code. */
async function codeStep(app: FastifyInstance, challenge: string, code: string, ip: string) {
  return app.inject({
    method: 'POST',
    url: '/api/auth/login/two-factor',
    remoteAddress: ip,
    ...json({ challenge, code }),
  });
}

/** One JSON request over a real socket to the listening console, sent from `localAddress`. */
function overSocket(port: number, localAddress: string, method: string, path: string, body: unknown) {
  return new Promise<{ status: number; body: string; retryAfter: string | undefined }>((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      {
        host: localAddress.includes(':') ? '::1' : '127.0.0.1',
        port,
        method,
        path,
        localAddress,
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: Buffer.concat(chunks).toString('utf8'),
            retryAfter: res.headers['retry-after'] as string | undefined,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

async function call(
  app: FastifyInstance,
  cookie: string,
  method: 'GET' | 'POST' | 'DELETE',
  url: string,
  body?: unknown,
  ip = '127.0.0.1',
) {
  return app.inject({
    method,
    url,
    remoteAddress: ip,
    headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

for (const dialect of dialects()) {
  describe(`account security (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(dialect);
    });
    after(() => t.close());

    /** `POST /api/account/two-factor/enable` with the code of the test clock's time step. */
    const confirmWithCurrentCode = (user: TestUser, secret: string) =>
      call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/enable',
        { code: totpCode(secret, totpStep(t.clock.now)) },
        freshIp(),
      );

    /** Turns two-factor on for a user; answers the secret and the recovery codes. */
    async function enableTwoFactor(user: TestUser) {
      const setup = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/setup',
        { password: user.password },
        freshIp(),
      );
      assert.equal(setup.statusCode, 200, setup.body);
      const { secret, uri } = setup.json().data;
      assert.match(uri, new RegExp(`^otpauth://totp/Palisade:.*secret=${secret}`));
      const enable = await confirmWithCurrentCode(user, secret);
      assert.equal(enable.statusCode, 200, enable.body);
      return { secret: secret as string, codes: enable.json().data.recovery_codes as string[] };
    }

    test('changing the password needs the old one, follows the register rules and signs out the other sessions', async () => {
      const user = await registerUser(t.app, freshIp());
      const other = sessionCookieFrom((await login(t.app, user, freshIp())).headers['set-cookie']);

      const wrong = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/password',
        {
          old_password: 'not the password',
          new_password: 'a brand new password',
        },
        freshIp(),
      );
      assert.equal(wrong.statusCode, 403);
      assert.match(wrong.json().error, /^old_password: /);
      const short = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/password',
        {
          old_password: user.password,
          new_password: 'short',
        },
        freshIp(),
      );
      assert.equal(short.statusCode, 400);
      assert.equal(short.json().error, 'new_password: at least 8 characters');
      const missing = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/password',
        { new_password: 'long enough' },
        freshIp(),
      );
      assert.equal(missing.statusCode, 400);
      assert.match(missing.json().error, /^old_password: is required$/);
      // Nothing changed by the refusals: the other session still works.
      assert.equal((await call(t.app, other, 'GET', '/api/account/me')).statusCode, 200);

      const ok = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/password',
        {
          old_password: user.password,
          new_password: 'a brand new password',
        },
        freshIp(),
      );
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json().data, { changed: true, sessions_ended: 1 });
      assert.equal((await call(t.app, other, 'GET', '/api/account/me')).statusCode, 401, 'the other session ended');
      assert.equal((await call(t.app, user.cookie, 'GET', '/api/account/me')).statusCode, 200, 'this one stays');
      assert.equal((await login(t.app, user, freshIp())).statusCode, 401, 'the old password no longer works');
      assert.equal((await login(t.app, { ...user, password: 'a brand new password' }, freshIp())).statusCode, 200);

      const events = (await call(t.app, user.cookie, 'GET', '/api/security/events')).json().data.events;
      assert.ok(events.some((e: { kind: string }) => e.kind === 'password_changed'));
    });

    test('sessions list the device in words, the address and this session; one can be revoked', async () => {
      const user = await registerUser(t.app, freshIp());
      const ipA = freshIp();
      const ipB = freshIp();
      const a = sessionCookieFrom((await login(t.app, user, ipA, FIREFOX)).headers['set-cookie']);
      const b = sessionCookieFrom((await login(t.app, user, ipB, SAFARI_IPHONE)).headers['set-cookie']);

      const list = await call(t.app, a, 'GET', '/api/account/sessions');
      assert.equal(list.statusCode, 200);
      const sessions = list.json().data.sessions as { id: string; device: string; ip: string; current: boolean }[];
      assert.equal(sessions.length, 3, 'the register session and two sign-ins');
      const mine = sessions.find((s) => s.current)!;
      assert.equal(mine.device, 'Firefox on Linux');
      assert.equal(mine.ip, ipA);
      const phone = sessions.find((s) => s.ip === ipB)!;
      assert.equal(phone.device, 'Safari on iOS');
      assert.equal(phone.current, false);
      assert.equal(sessions.filter((s) => s.current).length, 1);

      // At rest the session is its SHA-256: the cookie's value is nowhere in the table.
      const raw = a.split('=')[1]!;
      const rows = await t.db.selectFrom('sessions').selectAll().where('person_id', '=', user.id).execute();
      assert.ok(rows.every((r) => !JSON.stringify(r).includes(raw)));

      // Last seen moves when a session is used after a minute.
      t.clock.advance(61_000);
      await call(t.app, b, 'GET', '/api/account/me', undefined, ipB);
      const again = (await call(t.app, a, 'GET', '/api/account/sessions')).json().data.sessions as {
        id: string;
        last_seen_at: number;
      }[];
      assert.equal(again.find((s) => s.id === phone.id)!.last_seen_at, t.clock.now);

      const other = await registerUser(t.app, freshIp());
      const foreign = await call(t.app, other.cookie, 'DELETE', `/api/account/sessions/${phone.id}`);
      assert.equal(foreign.statusCode, 404, "another account's session is not found");
      assert.equal((await call(t.app, a, 'DELETE', '/api/account/sessions/not-an-id')).statusCode, 400);

      const revoke = await call(t.app, a, 'DELETE', `/api/account/sessions/${phone.id}`);
      assert.equal(revoke.statusCode, 200);
      assert.equal((await call(t.app, b, 'GET', '/api/account/me')).statusCode, 401);
      assert.equal((await call(t.app, a, 'DELETE', `/api/account/sessions/${phone.id}`)).statusCode, 404);

      const rest = await call(t.app, a, 'POST', '/api/account/sessions/revoke-others');
      assert.deepEqual(rest.json().data, { sessions_ended: 1 });
      assert.equal((await call(t.app, user.cookie, 'GET', '/api/account/me')).statusCode, 401);
      assert.equal((await call(t.app, a, 'GET', '/api/account/me')).statusCode, 200);
    });

    test('two-factor: setup needs the password, a code confirms it, the secret is sealed at rest', async () => {
      const user = await registerUser(t.app, freshIp());
      const wrong = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/setup',
        { password: 'nope nope' },
        freshIp(),
      );
      assert.equal(wrong.statusCode, 403);
      assert.match(wrong.json().error, /^password: /);
      const early = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/enable',
        { code: '123456' },
        freshIp(),
      );
      assert.equal(early.statusCode, 409, 'no setup is waiting');

      const setup = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/setup',
        { password: user.password },
        freshIp(),
      );
      const { secret } = setup.json().data;
      const bad = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/enable',
        {
          code: totpCode(secret, totpStep(t.clock.now) + 5),
        },
        freshIp(),
      );
      assert.equal(bad.statusCode, 403);
      assert.match(bad.json().error, /^code: /);
      assert.equal((await call(t.app, user.cookie, 'GET', '/api/account/two-factor')).json().data.enabled, false);

      const enable = await confirmWithCurrentCode(user, secret);
      assert.equal(enable.statusCode, 200);
      const codes = enable.json().data.recovery_codes as string[];
      assert.equal(codes.length, 10);
      assert.equal(new Set(codes).size, 10);
      for (const c of codes) assert.match(c, /^[a-z0-9]{5}-[a-z0-9]{5}$/);
      const status = (await call(t.app, user.cookie, 'GET', '/api/account/two-factor')).json().data;
      assert.deepEqual({ ...status, enabled_at: null }, { enabled: true, enabled_at: null, recovery_codes_left: 10 });

      const row = (await findPersonByEmail(t.db, user.email))!;
      assert.ok(row.totp_secret_enc && !row.totp_secret_enc.includes(secret), 'the secret is stored sealed');
      const stored = await t.db
        .selectFrom('recovery_codes')
        .select('code_hash')
        .where('person_id', '=', user.id)
        .execute();
      assert.equal(stored.length, 10);
      for (const c of codes) assert.ok(stored.every((s) => !s.code_hash.includes(c.replace('-', ''))));
      const again = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/setup',
        { password: user.password },
        freshIp(),
      );
      assert.equal(again.statusCode, 409);
    });

    test('two-factor sign-in: no session until the code is right; a code is taken once; recovery codes once each', async () => {
      const user = await registerUser(t.app, freshIp());
      const { secret, codes } = await enableTwoFactor(user);
      const ip = freshIp();

      const first = await login(t.app, user, ip);
      assert.equal(first.statusCode, 200);
      assert.equal(first.headers['set-cookie'], undefined, 'no session after the password alone');
      const { challenge, two_factor_required } = first.json().data;
      assert.equal(two_factor_required, true);

      const step = (code: string, c = challenge) => codeStep(t.app, c, code, ip);
      const wrong = await step(totpCode(secret, totpStep(t.clock.now) + 7));
      assert.equal(wrong.statusCode, 401);
      assert.equal(wrong.headers['set-cookie'], undefined);
      assert.equal((await step('123456', 'made-up-challenge')).statusCode, 401);

      t.clock.advance(30_000); // the enabling code's step is spent; the next one is fresh
      const code = totpCode(secret, totpStep(t.clock.now));
      const ok = await step(code);
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ok.json().data.account.email, user.email);
      const cookie = sessionCookieFrom(ok.headers['set-cookie']);
      assert.equal((await call(t.app, cookie, 'GET', '/api/account/me')).statusCode, 200);
      assert.equal((await step(code)).statusCode, 401, 'the challenge is used up');

      // The same code again, on a new sign-in within its window: refused.
      const second = (await login(t.app, user, freshIp())).json().data.challenge;
      const replay = await step(code, second);
      assert.equal(replay.statusCode, 401);
      assert.match(replay.json().error, /already used/);

      // A recovery code, typed in upper case without the dash, works once.
      const recovery = await step(codes[0]!.replace('-', '').toUpperCase(), second);
      assert.equal(recovery.statusCode, 200, recovery.body);
      const third = (await login(t.app, user, freshIp())).json().data.challenge;
      assert.equal((await step(codes[0]!, third)).statusCode, 401, 'a recovery code is good once');
      const left = await call(t.app, cookie, 'GET', '/api/account/two-factor');
      assert.equal(left.json().data.recovery_codes_left, 9);

      const kinds = (await call(t.app, cookie, 'GET', '/api/security/events'))
        .json()
        .data.events.map((e: { kind: string }) => e.kind);
      assert.ok(kinds.includes('two_factor_failed'));
      assert.ok(kinds.includes('recovery_code_used'));
      assert.ok(kinds.includes('two_factor_enabled'));
    });

    test('the code step shares the login limit: 8 a minute per address, then 429', async () => {
      const user = await registerUser(t.app, freshIp());
      await enableTwoFactor(user);
      const ip = freshIp();
      const challenge = (await login(t.app, user, ip)).json().data.challenge; // attempt 1
      const statuses: number[] = [];
      for (let i = 0; i < 8; i += 1) {
        const res = await codeStep(t.app, challenge, '000000', ip);
        statuses.push(res.statusCode);
      }
      assert.deepEqual(statuses.slice(0, 7), [401, 401, 401, 401, 401, 401, 401]);
      assert.equal(statuses[7], 429);
    });

    test('a new password ends the sign-ins waiting for their code', async () => {
      const user = await registerUser(t.app, freshIp());
      const { secret } = await enableTwoFactor(user);
      const challenge = (await login(t.app, user, freshIp())).json().data.challenge;
      const changed = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/password',
        { old_password: user.password, new_password: 'another new password' },
        freshIp(),
      );
      assert.equal(changed.statusCode, 200);
      t.clock.advance(30_000);
      const late = await codeStep(t.app, challenge, totpCode(secret, totpStep(t.clock.now)), freshIp());
      assert.equal(late.statusCode, 401);
      assert.match(late.json().error, /^challenge: /);
    });

    test('password checks on a signed-in account share the login limit, per account', async () => {
      const user = await registerUser(t.app, freshIp());
      const statuses: number[] = [];
      for (let i = 0; i < 9; i += 1) {
        const res = await call(
          t.app,
          user.cookie,
          'POST',
          '/api/account/two-factor/setup',
          { password: `guess ${i}` },
          freshIp(),
        );
        statuses.push(res.statusCode);
      }
      assert.deepEqual(statuses, [403, 403, 403, 403, 403, 403, 403, 403, 429], 'from a new address each time');
      const right = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/setup',
        { password: user.password },
        freshIp(),
      );
      assert.equal(right.statusCode, 429, 'not even the right password is checked inside the limit');
    });

    test('five wrong codes end the challenge', async () => {
      const user = await registerUser(t.app, freshIp());
      const { secret } = await enableTwoFactor(user);
      const challenge = (await login(t.app, user, freshIp())).json().data.challenge;
      for (let i = 0; i < 5; i += 1) {
        const wrong = totpCode(secret, totpStep(t.clock.now)) === '000000' ? '111111' : '000000';
        const res = await codeStep(t.app, challenge, wrong, freshIp());
        assert.equal(res.statusCode, 401);
      }
      t.clock.advance(30_000);
      const late = await codeStep(t.app, challenge, totpCode(secret, totpStep(t.clock.now)), freshIp());
      assert.equal(late.statusCode, 401);
      assert.match(late.json().error, /^challenge: /);
    });

    test('turning two-factor off needs the password or a code', async () => {
      const user = await registerUser(t.app, freshIp());
      const { codes } = await enableTwoFactor(user);
      const none = await call(t.app, user.cookie, 'POST', '/api/account/two-factor/disable', {}, freshIp());
      assert.equal(none.statusCode, 400);
      const wrong = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/disable',
        { password: 'wrong one' },
        freshIp(),
      );
      assert.equal(wrong.statusCode, 403);
      const ok = await call(
        t.app,
        user.cookie,
        'POST',
        '/api/account/two-factor/disable',
        { code: codes[3] },
        freshIp(),
      );
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json().data, { enabled: false, enabled_at: null, recovery_codes_left: 0 });
      const plain = await login(t.app, user, freshIp());
      assert.ok(plain.json().data.account, 'the password alone signs in again');
      assert.equal(
        await t.db.selectFrom('recovery_codes').select('id').where('person_id', '=', user.id).executeTakeFirst(),
        undefined,
      );
    });

    test('deleting the account needs the password (and a code) and takes everything it owns, in one go', async () => {
      const user = await registerUser(t.app, freshIp());
      const { secret } = await enableTwoFactor(user);
      const server = await insertTestServer(t.app, user);
      const products = await t.app.services.catalog.products(user.id);
      const ticket = await call(t.app, user.cookie, 'POST', '/api/tickets', {
        product_id: products[0]!.id,
        subject: 'Help',
        message: 'Please',
      });
      assert.equal(ticket.statusCode, 201, ticket.body);
      assert.equal((await call(t.app, user.cookie, 'POST', '/api/tokens', { name: 'ci' })).statusCode, 201);
      assert.equal((await call(t.app, user.cookie, 'POST', '/api/keys', { name: 'ci' })).statusCode, 201);
      const bystander = await registerUser(t.app, freshIp());
      await insertTestServer(t.app, bystander);

      const noPassword = await call(t.app, user.cookie, 'DELETE', '/api/account', {}, freshIp());
      assert.equal(noPassword.statusCode, 400);
      assert.match(noPassword.json().error, /^password: /);
      const wrong = await call(t.app, user.cookie, 'DELETE', '/api/account', { password: 'wrong one' }, freshIp());
      assert.equal(wrong.statusCode, 403);
      const noCode = await call(t.app, user.cookie, 'DELETE', '/api/account', { password: user.password }, freshIp());
      assert.equal(noCode.statusCode, 400);
      assert.match(noCode.json().error, /^code: /);
      assert.ok(await findPersonByEmail(t.db, user.email), 'nothing deleted by the refusals');

      t.clock.advance(30_000);
      const ok = await call(
        t.app,
        user.cookie,
        'DELETE',
        '/api/account',
        {
          password: user.password,
          code: totpCode(secret, totpStep(t.clock.now)),
        },
        freshIp(),
      );
      assert.equal(ok.statusCode, 200, ok.body);
      assert.deepEqual(ok.json().data, { account_deleted: true });
      assert.match(String(ok.headers['set-cookie']), /^pl_session=; .*Max-Age=0/);
      assert.equal((await call(t.app, user.cookie, 'GET', '/api/account/me')).statusCode, 401);
      assert.equal((await login(t.app, user, freshIp())).statusCode, 401);

      const owned = [
        'sessions',
        'access_tokens',
        'signing_keys',
        'products',
        'servers',
        'tickets',
        'notifications',
        'security_events',
      ] as const;
      for (const table of owned) {
        const row = await t.db
          .selectFrom(table)
          .select('account_id')
          .where('account_id', '=', user.id)
          .executeTakeFirst();
        assert.equal(row, undefined, `${table} still holds the account's rows`);
      }
      assert.equal(
        await t.db.selectFrom('samples').select('id').where('server_id', '=', server.id).executeTakeFirst(),
        undefined,
      );
      const others = await t.db.selectFrom('servers').select('id').where('account_id', '=', bystander.id).execute();
      assert.equal(others.length, 1, "another account's servers stay");
    });

    test('two-factor codes: limited per account from any number of addresses, locked after 10 wrong, the lock names its end', async () => {
      // A real socket per request, each from the loopback address given (127.0.0.2 …).
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      const port = (t.app.server.address() as AddressInfo).port;
      const user = await registerUser(t.app, freshIp());
      const { secret } = await enableTwoFactor(user);
      t.clock.advance(30_000); // the enabling code's step is spent
      const wrongCode = () => (totpCode(secret, totpStep(t.clock.now)) === '000000' ? '111111' : '000000');
      const addresses = ['127.0.0.2', '127.0.0.3', '127.0.0.4', '127.0.0.5', '127.0.0.6'];
      const challenges = new Map<string, string>();
      const signIn = async (from: string) => {
        const res = await overSocket(port, from, 'POST', '/api/auth/login', {
          email: user.email,
          password: user.password,
        });
        assert.equal(res.status, 200, res.body);
        challenges.set(from, JSON.parse(res.body).data.challenge);
      };
      for (const from of addresses) await signIn(from);
      const codeFrom = (from: string, code: string) =>
        overSocket(port, from, 'POST', '/api/auth/login/two-factor', { challenge: challenges.get(from), code });

      // 15 wrong codes in one minute, 3 per address (each address stays inside its own limit of 8).
      const answers: Array<{ status: number; body: string; retryAfter: string | undefined }> = [];
      for (let i = 0; i < 15; i += 1) answers.push(await codeFrom(addresses[i % addresses.length]!, wrongCode()));
      const judged = answers.filter((a) => a.status === 401 && /^code: wrong code/.test(JSON.parse(a.body).error));
      const limited = answers.filter((a) => a.status === 429);
      assert.equal(judged.length, 8, `codes judged on one account within a minute: ${answers.map((a) => a.status)}`);
      assert.equal(limited.length, 7);
      assert.match(
        JSON.parse(limited[0]!.body).error,
        /^code: too many codes tried on this account; try again in \d+ s$/,
      );
      assert.ok(Number(limited[0]!.retryAfter) >= 1);

      // The next minute: two more wrong codes make 10 within 15 minutes, and the account locks.
      t.clock.advance(61_000);
      const ninth = await codeFrom('127.0.0.2', wrongCode());
      assert.equal(ninth.status, 401);
      const lastWrongAt = t.clock.now;
      const tenth = await codeFrom('127.0.0.3', wrongCode());
      assert.equal(tenth.status, 401);
      // A right code is refused while the lock lasts, from a fresh sign-in and a fresh address too.
      t.clock.advance(61_000);
      await signIn('127.0.0.7');
      const right = await codeFrom('127.0.0.7', totpCode(secret, totpStep(t.clock.now)));
      assert.equal(right.status, 429, right.body);
      const until = new Date(lastWrongAt + 15 * 60_000).toISOString();
      assert.equal(
        JSON.parse(right.body).error,
        `code: too many wrong codes on this account; two-factor codes are locked until ${until} (in 14 min)`,
      );
      assert.equal(right.retryAfter, String((lastWrongAt + 15 * 60_000 - t.clock.now) / 1000));
      // The owner sees the wrong codes and the lock on the security events.
      const events = (await call(t.app, user.cookie, 'GET', '/api/security/events?limit=100')).json().data.events;
      const kinds = events.map((e: { kind: string }) => e.kind);
      assert.equal(kinds.filter((k: string) => k === 'two_factor_failed').length, 10, 'only judged codes are counted');
      assert.equal(kinds.filter((k: string) => k === 'two_factor_locked').length, 1);
      // A signed-in account's code checks are under the same lock.
      const disable = await call(t.app, user.cookie, 'POST', '/api/account/two-factor/disable', {
        code: totpCode(secret, totpStep(t.clock.now)),
      });
      assert.equal(disable.statusCode, 429, disable.body);

      // When the lock ends, the right code signs in.
      t.clock.advance(lastWrongAt + 15 * 60_000 - t.clock.now + 30_000);
      await signIn('127.0.0.8');
      const after = await codeFrom('127.0.0.8', totpCode(secret, totpStep(t.clock.now)));
      assert.equal(after.status, 200, after.body);
    });

    test('IPv6 clients are counted per /64; an IPv4-mapped address as its IPv4 one', async () => {
      assert.equal(addressKey('2001:db8:1:2:aaaa::1'), addressKey('2001:db8:1:2:ffff:1:2:3'));
      assert.equal(addressKey('2001:db8:1:2::1'), '2001:db8:1:2::/64');
      assert.notEqual(addressKey('2001:db8:1:2::1'), addressKey('2001:db8:1:3::1'));
      assert.equal(addressKey('2001:0db8:0001:0002:0:0:0:9'), '2001:db8:1:2::/64');
      assert.equal(addressKey('::ffff:198.51.100.7'), '198.51.100.7');
      assert.equal(addressKey('198.51.100.7'), '198.51.100.7');
      assert.equal(addressKey('::1'), '0:0:0:0::/64');
      // One real client over ::1: its password guesses share the /64's window.
      const v6 = await testApp(dialect);
      try {
        await v6.app.listen({ host: '::1', port: 0 });
        const port = (v6.app.server.address() as AddressInfo).port;
        const statuses: number[] = [];
        for (let i = 0; i < 9; i += 1)
          statuses.push(
            (await overSocket(port, '::1', 'POST', '/api/auth/login', { email: 'nobody@example.com', password: 'x' }))
              .status,
          );
        assert.deepEqual(statuses, [401, 401, 401, 401, 401, 401, 401, 401, 429]);
        const inWindow = await v6.app.limits.consume('login', addressKey('::1'));
        assert.equal(inWindow.allowed, false, 'counted under the /64 key');
      } finally {
        await v6.close();
      }
    });

    test('an admin account is not deleted from the dashboard', async () => {
      const user = await registerUser(t.app, freshIp());
      await t.db.updateTable('people').set({ role: 'admin' }).where('id', '=', user.id).execute();
      const res = await call(t.app, user.cookie, 'DELETE', '/api/account', { password: user.password }, freshIp());
      assert.equal(res.statusCode, 409);
      assert.ok(await findPersonByEmail(t.db, user.email));
    });
  });
}

test('every security event kind has words, and unknown kinds are shown as they came', () => {
  for (const kind of SECURITY_EVENT_KINDS) assert.doesNotMatch(securityEventLabel(kind), /_/);
  assert.equal(securityEventLabel('login_failed'), 'Failed sign-in');
  assert.equal(securityEventLabel('something_new'), 'something_new');
  assert.equal(securityEventLabel('__proto__'), '__proto__');
});
