import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Captured, closedPort } from '@palisade/testkit';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { openDatabase } from '../src/db/database.js';
import { startOidcProvider } from './oidc-provider-process.js';
import { dialects, json, registerUser, type TestApp, type TestUser, testApp } from './support.js';

const PUBLIC_URL = 'http://console.test';
const CLIENT = { id: 'palisade-console', secret: 'a client secret the tests share with the provider' };

/** The provider's accounts (oidc-provider.ts, OIDC_USERS). */
const USERS = {
  alice: { email: 'alice@example.com', email_verified: true, name: 'Alice', groups: ['auditors', 'ops-admins'] },
  victor: { email: 'victor@example.com', email_verified: true, name: 'Victor', groups: ['auditors'] },
  nora: { email: 'nora@example.com', email_verified: true, name: 'Nora', groups: [] },
  eve: { email: 'eve@elsewhere.test', email_verified: true, name: 'Eve', groups: ['ops-admins'] },
  unverified: { email: 'una@example.com', email_verified: false, name: 'Una', groups: [] },
  owner: { email: 'owner@example.com', email_verified: true, name: 'Owner', groups: ['auditors'] },
  leaver: { email: 'leaver@example.com', email_verified: true, name: 'Leaver', groups: [] },
};
type Sub = keyof typeof USERS;

const startProvider = (port: number) =>
  startOidcProvider(
    port,
    { id: CLIENT.id, secret: CLIENT.secret, redirectUri: `${PUBLIC_URL}/api/auth/oidc/callback` },
    USERS,
  );

/**
 * What a browser does at the provider: follows the authorization address, posts the sign-in form
 * as `sub`, and is sent back; answers the console's callback address the provider sent it to.
 */
async function throughProvider(authorizationUrl: string, sub: Sub): Promise<URL> {
  const jar = new Map<string, string>();
  const go = async (url: URL | string, init: RequestInit = {}) => {
    const cookie = [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const res = await fetch(url, {
      ...init,
      redirect: 'manual',
      headers: { ...(init.headers as Record<string, string>), cookie },
    });
    for (const set of res.headers.getSetCookie()) {
      const pair = set.split(';')[0]!;
      jar.set(pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1));
    }
    assert.ok([302, 303].includes(res.status), `${res.status} from ${url}: ${await res.text()}`);
    return new URL(res.headers.get('location')!, url);
  };
  const interaction = await go(authorizationUrl);
  const uid = /^\/interaction\/([^/]+)$/.exec(interaction.pathname)?.[1];
  assert.ok(uid, `expected the provider's sign-in, got ${interaction}`);
  const resume = await go(new URL(`/interaction/${uid}/login`, interaction), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `login=${sub}`,
  });
  return go(resume);
}

const cookieOf = (setCookie: string | string[] | undefined) => {
  const header = Array.isArray(setCookie) ? setCookie.join(', ') : (setCookie ?? '');
  return /pl_session=([^;]+)/.exec(header)?.[0] ?? null;
};

/** Each sign-in comes from an address of its own: sign-ins count against the per-IP login limit. */
let browsers = 0;
const browser = () => `10.9.${Math.floor(++browsers / 250)}.${browsers % 250}`;

/** Starts a sign-in on `app`, goes through the provider as `sub`, and answers the callback's address. */
async function providerAnswer(app: FastifyInstance, sub: Sub, returnTo = '/dashboard/servers') {
  const start = await app.inject({
    method: 'GET',
    remoteAddress: browser(),
    url: `/api/auth/oidc/start?return_to=${encodeURIComponent(returnTo)}`,
  });
  assert.equal(start.statusCode, 302, start.body);
  const to = new URL(start.headers.location as string);
  assert.equal(to.searchParams.get('code_challenge_method'), 'S256');
  assert.ok(to.searchParams.get('state') && to.searchParams.get('nonce'));
  const callback = await throughProvider(to.href, sub);
  assert.equal(`${callback.origin}${callback.pathname}`, `${PUBLIC_URL}/api/auth/oidc/callback`);
  return `${callback.pathname}${callback.search}`;
}

async function callback(app: FastifyInstance, path: string) {
  const res = await app.inject({ method: 'GET', url: path, remoteAddress: browser() });
  assert.equal(res.statusCode, 302, res.body);
  const location = res.headers.location as string;
  const error = location.startsWith('/dashboard/sign-in?')
    ? new URLSearchParams(location.slice(location.indexOf('?'))).get('sso_error')
    : null;
  return { location, error, cookie: cookieOf(res.headers['set-cookie']) };
}

const ssoSignIn = async (app: FastifyInstance, sub: Sub, returnTo?: string) =>
  callback(app, await providerAnswer(app, sub, returnTo));

async function me(app: FastifyInstance, cookie: string) {
  const res = await app.inject({ method: 'GET', url: '/api/account/me', headers: { cookie } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data as { id: number; email: string; name: string; sign_in: string };
}

/** A JSON request with the session cookie. */
const send = (app: FastifyInstance, method: 'POST' | 'DELETE', url: string, cookie: string, body: object) =>
  app.inject({ method, url, headers: { cookie, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

const closeAccount = (app: FastifyInstance, cookie: string, body: Record<string, string> = {}) =>
  send(app, 'DELETE', '/api/account', cookie, body);

async function teamsOf(app: FastifyInstance, cookie: string) {
  const res = await app.inject({ method: 'GET', url: '/api/teams', headers: { cookie } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.teams as { id: number; name: string; role: string }[];
}

const settings = (port: number) => ({
  PALISADE_PUBLIC_URL: PUBLIC_URL,
  PALISADE_OIDC_ISSUER: `http://127.0.0.1:${port}`,
  PALISADE_OIDC_CLIENT_ID: CLIENT.id,
  PALISADE_OIDC_CLIENT_SECRET: CLIENT.secret,
  PALISADE_OIDC_NAME: 'Example SSO',
  PALISADE_OIDC_ALLOWED_DOMAINS: 'example.com',
  PALISADE_OIDC_TEAM_MAP: 'ops-admins=1:admin,auditors=1:viewer',
});

for (const dialect of dialects()) {
  describe(`single sign-on with OpenID Connect (${dialect})`, () => {
    let port: number;
    let provider: Captured;
    let t: TestApp;
    let owner: TestUser;
    before(async () => {
      port = await closedPort();
      provider = await startProvider(port);
      t = await testApp(dialect, settings(port));
      // The first sign-up's team is team 1, the one PALISADE_OIDC_TEAM_MAP names.
      owner = await registerUser(t.app);
      assert.deepEqual(
        (await teamsOf(t.app, owner.cookie)).map((team) => team.id),
        [1],
      );
    });
    after(async () => {
      await t?.close();
      await provider?.stop();
    });

    test('the sign-in page learns that single sign-on is on, and its name', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/api/auth/oidc' });
      assert.deepEqual(res.json(), { data: { enabled: true, name: 'Example SSO' } });
    });

    test('a first sign-in creates the person, gives the role their groups map to, and opens a session', async () => {
      const done = await ssoSignIn(t.app, 'alice');
      assert.equal(done.error, null);
      assert.equal(done.location, '/dashboard/servers');
      assert.ok(done.cookie);
      const account = await me(t.app, done.cookie);
      assert.equal(account.email, 'alice@example.com');
      assert.equal(account.name, 'Alice');
      // auditors → viewer and ops-admins → admin in team 1: the higher wins; no team of her own.
      assert.deepEqual(
        (await teamsOf(t.app, done.cookie)).map(({ id, role }) => ({ id, role })),
        [{ id: 1, role: 'admin' }],
      );
      const audit = await t.app.inject({ method: 'GET', url: '/api/audit', headers: { cookie: owner.cookie } });
      const entries = audit.json().data.entries as { action: string; actor: string; summary: string }[];
      const sso = entries.filter((e) => e.action.startsWith('sso.')).map((e) => `${e.action} ${e.actor}`);
      assert.deepEqual(sso.sort(), [
        'sso.member alice@example.com',
        'sso.person_created alice@example.com',
        'sso.sign_in alice@example.com',
      ]);
      // No password: password sign-in is refused like any wrong one.
      const guessed = await t.app.inject({
        method: 'POST',
        url: '/api/auth/login',
        ...json({ email: 'alice@example.com', password: 'correct horse battery' }),
      });
      assert.equal(guessed.statusCode, 401);
      assert.equal(guessed.json().error, 'invalid email or password');
    });

    test('a second sign-in is the same person', async () => {
      const first = await ssoSignIn(t.app, 'alice');
      const second = await ssoSignIn(t.app, 'alice', '/dashboard');
      assert.equal(second.location, '/dashboard');
      assert.equal((await me(t.app, second.cookie!)).id, (await me(t.app, first.cookie!)).id);
      const people = await t.db.selectFrom('people').select('id').where('email', '=', 'alice@example.com').execute();
      assert.equal(people.length, 1);
    });

    test('a viewer by their group cannot write', async () => {
      const done = await ssoSignIn(t.app, 'victor');
      assert.ok(done.cookie, done.error ?? '');
      assert.deepEqual(
        (await teamsOf(t.app, done.cookie)).map(({ id, role }) => ({ id, role })),
        [{ id: 1, role: 'viewer' }],
      );
      const write = await t.app.inject({
        method: 'PATCH',
        url: '/api/teams/1',
        headers: { cookie: done.cookie, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'Taken over' }),
      });
      assert.equal(write.statusCode, 403, write.body);
      assert.equal(write.json().code, 'permission_required');
    });

    test('a person no group maps gets a team of their own', async () => {
      const done = await ssoSignIn(t.app, 'nora');
      const teams = await teamsOf(t.app, done.cookie!);
      assert.equal(teams.length, 1);
      assert.notEqual(teams[0]!.id, 1);
      assert.equal(teams[0]!.role, 'owner');
    });

    test('an existing person with the e-mail, at an allowed domain, is linked, not made twice, and stays owner', async () => {
      await t.db.updateTable('people').set({ email: 'owner@example.com' }).where('id', '=', owner.id).execute();
      const done = await ssoSignIn(t.app, 'owner');
      assert.equal((await me(t.app, done.cookie!)).id, owner.id);
      // Their group maps to viewer in team 1, but the team's last owner is never lowered.
      assert.deepEqual(
        (await teamsOf(t.app, done.cookie!)).map(({ id, role }) => ({ id, role })),
        [{ id: 1, role: 'owner' }],
      );
    });

    test('an address outside the allowed domains, or not verified, is refused and nobody is made', async () => {
      const eve = await ssoSignIn(t.app, 'eve');
      assert.equal(eve.cookie, null);
      assert.match(eve.error!, /elsewhere\.test may not sign in here/);
      const una = await ssoSignIn(t.app, 'unverified');
      assert.equal(una.cookie, null);
      assert.match(una.error!, /not verified the e-mail una@example\.com/);
      const made = await t.db
        .selectFrom('people')
        .select('email')
        .where('email', 'in', ['eve@elsewhere.test', 'una@example.com'])
        .execute();
      assert.deepEqual(made, []);
      const events = await t.db
        .selectFrom('security_events')
        .select('reason')
        .where('path', '=', '/api/auth/oidc/callback')
        .execute();
      assert.ok(events.some((e) => /elsewhere\.test/.test(e.reason)));
    });

    test('the provider sending the browser back a second time with the same state is refused', async () => {
      const answer = await providerAnswer(t.app, 'alice');
      const first = await callback(t.app, answer);
      assert.ok(first.cookie, first.error ?? '');
      const replayed = await callback(t.app, answer);
      assert.equal(replayed.cookie, null);
      assert.match(replayed.error!, /unknown or was already used/);
    });

    test('a return address off the dashboard is refused with 400 naming return_to', async () => {
      for (const bad of ['https://evil.test/', '//evil.test/dashboard', '/api/tokens', '/dashboard\\@evil.test']) {
        const res = await t.app.inject({
          method: 'GET',
          url: `/api/auth/oidc/start?return_to=${encodeURIComponent(bad)}`,
        });
        assert.equal(res.statusCode, 400, bad);
        assert.match(res.json().error, /^return_to:/);
      }
    });

    test('a sign-in started on one console is finished on another (the waiting sign-in is in the database)', async () => {
      const handle = await openDatabase(t.config);
      const second = await buildApp({ config: t.config, db: handle.db, clock: () => t.clock.now });
      try {
        const done = await callback(second, await providerAnswer(t.app, 'victor'));
        assert.ok(done.cookie, done.error ?? '');
        assert.equal((await me(t.app, done.cookie)).email, 'victor@example.com');
      } finally {
        await second.close();
        await handle.close();
      }
    });

    test('a sign-in left at the provider for more than 10 minutes is refused', async () => {
      const answer = await providerAnswer(t.app, 'alice');
      t.clock.advance(10 * 60_000 + 1);
      const late = await callback(t.app, answer);
      assert.equal(late.cookie, null);
      assert.match(late.error!, /longer than 10 minutes/);
    });

    test('a team requiring two-factor takes the provider sign-in of a person without a password', async () => {
      await t.db.updateTable('accounts').set({ require_two_factor: 1 }).where('id', '=', 1).execute();
      try {
        const victor = await ssoSignIn(t.app, 'victor');
        const read = await t.app.inject({ method: 'GET', url: '/api/servers', headers: { cookie: victor.cookie! } });
        assert.equal(read.statusCode, 200, read.body);
        // The owner has a password and no code: the team's rule holds for them.
        const held = await t.app.inject({ method: 'GET', url: '/api/servers', headers: { cookie: owner.cookie } });
        assert.equal(held.statusCode, 403);
        assert.equal(held.json().code, 'two_factor_required');
      } finally {
        await t.db.updateTable('accounts').set({ require_two_factor: 0 }).where('id', '=', 1).execute();
      }
    });

    test('the account answers say how the person signs in: single_sign_on without a password', async () => {
      const alice = await ssoSignIn(t.app, 'alice');
      assert.equal((await me(t.app, alice.cookie!)).sign_in, 'single_sign_on');
      const session = await t.app.inject({
        method: 'GET',
        url: '/api/auth/session',
        headers: { cookie: alice.cookie! },
      });
      assert.equal(session.json().data.account.sign_in, 'single_sign_on');
      // The owner was linked to the provider, but has a password: still a password person.
      assert.equal((await me(t.app, owner.cookie)).sign_in, 'password');
    });

    test('a person without a password has no password to change and no Palisade code to set up', async () => {
      const alice = await ssoSignIn(t.app, 'alice');
      const change = await send(t.app, 'POST', '/api/account/password', alice.cookie!, {
        old_password: 'anything at all',
        new_password: 'a brand new password',
      });
      assert.equal(change.statusCode, 409, change.body);
      assert.match(change.json().error, /you sign in through Example SSO; your password is managed there/);
      const setup = await send(t.app, 'POST', '/api/account/two-factor/setup', alice.cookie!, {
        password: 'anything at all',
      });
      assert.equal(setup.statusCode, 409, setup.body);
      assert.match(setup.json().error, /Example SSO; its sign-in, second factor included/);
      const person = await t.db
        .selectFrom('people')
        .select(['password_hash', 'totp_pending_enc'])
        .where('email', '=', 'alice@example.com')
        .executeTakeFirstOrThrow();
      assert.deepEqual(person, { password_hash: '', totp_pending_enc: null });
    });

    test('a person without a password closes the account within 10 minutes of signing in through the provider', async () => {
      const first = await ssoSignIn(t.app, 'leaver');
      const id = (await me(t.app, first.cookie!)).id;
      t.clock.advance(10 * 60_000);
      const stale = await closeAccount(t.app, first.cookie!);
      assert.equal(stale.statusCode, 403, stale.body);
      assert.equal(
        stale.json().error,
        'sign in again through Example SSO to confirm, then close the account within 10 minutes',
      );
      assert.ok(await t.db.selectFrom('people').select('id').where('id', '=', id).executeTakeFirst());
      // A password proves nothing for them; a fresh sign-in does, in the session it started.
      assert.equal((await closeAccount(t.app, first.cookie!, { password: 'correct horse battery' })).statusCode, 403);
      const again = await ssoSignIn(t.app, 'leaver', '/dashboard/settings/account#delete-account');
      assert.equal(again.location, '/dashboard/settings/account#delete-account');
      t.clock.advance(10 * 60_000 - 1);
      const closed = await closeAccount(t.app, again.cookie!);
      assert.equal(closed.statusCode, 200, closed.body);
      assert.deepEqual(closed.json(), { data: { account_deleted: true } });
      assert.equal(await t.db.selectFrom('people').select('id').where('id', '=', id).executeTakeFirst(), undefined);
    });

    test('a person with a password still closes the account with it, however fresh the session', async () => {
      const person = await registerUser(t.app);
      const bare = await closeAccount(t.app, person.cookie);
      assert.equal(bare.statusCode, 400, bare.body);
      assert.equal(bare.json().error, 'password: is required');
      const wrong = await closeAccount(t.app, person.cookie, { password: 'not the password at all' });
      assert.equal(wrong.statusCode, 403, wrong.body);
      assert.equal(wrong.json().error, "password: not the account's current password");
      t.clock.advance(60 * 60_000);
      const closed = await closeAccount(t.app, person.cookie, { password: person.password });
      assert.equal(closed.statusCode, 200, closed.body);
    });

    // Last: the provider is replaced by another at the same address, with a key of its own.
    test('an ID token signed with a key the provider never published is refused', async () => {
      await provider.stop();
      provider = await startProvider(port);
      const forged = await ssoSignIn(t.app, 'alice');
      assert.equal(forged.cookie, null);
      assert.match(forged.error!, /JWT signature verification failed/);
    });
  });

  describe(`single sign-on while the provider is down (${dialect})`, () => {
    let port: number;
    let t: TestApp;
    let provider: Captured | undefined;
    before(async () => {
      port = await closedPort();
      t = await testApp(dialect, settings(port));
    });
    after(async () => {
      await t?.close();
      await provider?.stop();
    });

    test('the console starts, the sign-in answers 503 naming the provider, and works once it is up', async () => {
      const down = await t.app.inject({ method: 'GET', url: '/api/auth/oidc/start' });
      assert.equal(down.statusCode, 503);
      assert.match(down.json().error, new RegExp(`provider at http://127\\.0\\.0\\.1:${port} cannot be reached`));
      provider = await startProvider(port);
      const done = await ssoSignIn(t.app, 'alice');
      assert.ok(done.cookie, done.error ?? '');
    });
  });
}

describe('single sign-on when it is not set up', () => {
  let t: TestApp;
  before(async () => {
    t = await testApp('sqlite');
  });
  after(() => t.close());

  test('the sign-in page shows no button, and the routes are 404', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/auth/oidc' });
    assert.deepEqual(res.json(), { data: { enabled: false, name: null } });
    const start = await t.app.inject({ method: 'GET', url: '/api/auth/oidc/start' });
    assert.equal(start.statusCode, 404);
  });
});
