import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signRequest, type TeamRole } from '@palisade/protocol';
import { dialects, insertTestServer, joinTeam, registerUser, type TestApp, type TestUser, testApp } from './support.js';

/**
 * Write routes that need no team permission, and why: the walk below cannot expect a refusal from
 * them. Every other write route must declare a team permission (plugins/permissions.ts).
 */
const NOT_TEAM_WRITES: Record<string, 'public' | 'person'> = {
  'POST /api/auth/register': 'public',
  'POST /api/auth/login': 'public',
  'POST /api/auth/login/two-factor': 'public',
  'POST /api/auth/logout': 'public',
  'POST /api/agent/checkin': 'public',
  'DELETE /api/agent/server': 'public',
  'POST /api/agent/register': 'public',
  'POST /api/agent/benchmarks/:run/start': 'public',
  'POST /api/agent/benchmarks/:run/log': 'public',
  'POST /api/agent/benchmarks/:run/result': 'public',
  'POST /api/agent/benchmarks/:run/payload': 'public',
  'POST /alerts/confirm': 'public',
  'POST /api/teams': 'person',
  'DELETE /api/team/members/:personId': 'person',
  'POST /api/invitations/:token/accept': 'public',
  'POST /api/account/password': 'person',
  'DELETE /api/account/sessions/:id': 'person',
  'POST /api/account/sessions/revoke-others': 'person',
  'POST /api/account/two-factor/setup': 'person',
  'POST /api/account/two-factor/enable': 'person',
  'POST /api/account/two-factor/disable': 'person',
  'DELETE /api/account': 'person',
  'POST /api/tokens': 'person',
  'DELETE /api/tokens/:id': 'person',
  'POST /api/keys': 'person',
  'DELETE /api/keys/:id': 'person',
};

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Makes `person` a member of `owner`'s team with `role`, as an accepted invitation does. */
async function join(t: TestApp, owner: TestUser, person: TestUser, role: TeamRole) {
  await joinTeam(t, owner.id, person, role);
}

for (const dialect of dialects()) {
  describe(`roles enforced on every route (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    let serverId: number;
    const members: Partial<Record<TeamRole, TestUser>> = {};
    before(async () => {
      t = await testApp(dialect);
      owner = await registerUser(t.app);
      // The first sign-up: its team's id is the person's (people and teams are numbered alike so far).
      serverId = (await insertTestServer(t.app, owner, { name: 'team-web' })).id;
      for (const role of ['viewer', 'operator', 'billing'] as const) {
        const person = await registerUser(t.app);
        await join(t, owner, person, role);
        members[role] = person;
      }
    });
    after(() => t.close());

    /** A request of `who` acting in the owner's team (the dashboard sends the team it shows). */
    const inTeam = (who: TestUser, method: string, url: string, body?: unknown) =>
      t.app.inject({
        method: method as 'GET',
        url,
        headers: {
          cookie: who.cookie,
          'x-palisade-team': String(owner.id),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });

    test('every write route declares what it needs', () => {
      const writes = t.app.routeList.filter((r) => WRITES.has(r.method));
      const undeclared = writes.filter((r) => r.config.permission === undefined).map((r) => `${r.method} ${r.url}`);
      assert.deepEqual(undeclared, [], 'write routes without a permission');
      const notTeam = writes
        .filter((r) => r.config.permission === 'public' || r.config.permission === 'person')
        .map((r) => [`${r.method} ${r.url}`, r.config.permission]);
      assert.deepEqual(Object.fromEntries(notTeam), NOT_TEAM_WRITES);
    });

    test('a viewer cannot write anywhere: every write route answers 403 permission_required or 404', async () => {
      const writes = t.app.routeList.filter(
        (r) => WRITES.has(r.method) && !(`${r.method} ${r.url}` in NOT_TEAM_WRITES),
      );
      assert.ok(writes.length > 40, `${writes.length} write routes walked`);
      const seen: Record<string, number> = {};
      for (const route of writes) {
        const url = route.url.replace(':id', String(serverId)).replace(/:[a-zA-Z]+/g, '1');
        const res = await inTeam(members.viewer!, route.method, url, {});
        const key = `${route.method} ${route.url}`;
        seen[key] = res.statusCode;
        assert.ok(res.statusCode === 403 || res.statusCode === 404, `${key}: ${res.statusCode} ${res.body}`);
        if (res.statusCode === 403) {
          assert.equal(res.json().code, 'permission_required', key);
          assert.equal(res.json().permission, route.config.permission, key);
        }
      }
      // Nothing the viewer tried changed the team: its server is still there, with its name.
      const list = await inTeam(owner, 'GET', '/api/servers');
      assert.deepEqual(
        list.json().data.servers.map((s: { label: string }) => s.label),
        ['team-web'],
      );
    });

    test("a viewer reads the team's servers and control.read, not control.edit", async () => {
      const viewer = members.viewer!;
      const list = await inTeam(viewer, 'GET', '/api/servers');
      assert.equal(list.statusCode, 200);
      assert.deepEqual(
        list.json().data.servers.map((s: { id: number }) => s.id),
        [serverId],
      );
      const me = await inTeam(viewer, 'GET', '/api/account/me');
      assert.deepEqual(me.json().data.permissions, ['control.read']);
      assert.equal(me.json().data.id, viewer.id, 'the person, not the team');
      // Without the header the viewer acts in their own team, which has no server.
      const own = await t.app.inject({ method: 'GET', url: '/api/servers', headers: { cookie: viewer.cookie } });
      assert.deepEqual(own.json().data.servers, []);
    });

    test('an operator may change protection but not the team settings', async () => {
      const operator = members.operator!;
      const entry = await inTeam(operator, 'POST', '/api/fleet/entries', {
        list: 'black',
        ip: '198.51.100.9',
        reason: 'scanner',
        scope: 'all',
      });
      assert.equal(entry.statusCode, 201, entry.body);
      const webhook = await inTeam(operator, 'PUT', '/api/account/webhook', { url: 'https://hooks.example.com/x' });
      assert.equal(webhook.statusCode, 403);
      assert.deepEqual(
        { code: webhook.json().code, permission: webhook.json().permission },
        { code: 'permission_required', permission: 'settings.write' },
      );
      const product = await inTeam(operator, 'POST', '/api/products', { catalog_id: 1 });
      assert.equal(product.json().permission, 'billing.write');
    });

    test('a viewer sees the members but not the pending invitations', async () => {
      const viewer = members.viewer!;
      assert.equal((await inTeam(viewer, 'GET', '/api/team/members')).statusCode, 200);
      const invitations = await inTeam(viewer, 'GET', '/api/team/invitations');
      assert.equal(invitations.statusCode, 403);
      assert.equal(invitations.json().permission, 'members.manage');
    });

    test("a viewer's token and signing key act in the team, read-only", async () => {
      const viewer = members.viewer!;
      const token = (await inTeam(viewer, 'POST', '/api/tokens', { name: 'viewer' })).json().data.token as string;
      const v1 = await t.app.inject({
        method: 'GET',
        url: '/api/v1/servers',
        headers: { authorization: `Bearer ${token}` },
      });
      assert.deepEqual(
        v1.json().data.servers.map((s: { id: number }) => s.id),
        [serverId],
      );
      const key = (await inTeam(viewer, 'POST', '/api/keys', { name: 'viewer' })).json().data.key as string;
      const body = JSON.stringify({ product_id: 1, subject: 'help', message: 'please' });
      const signed = await t.app.inject({
        method: 'POST',
        url: '/api/tickets',
        headers: {
          ...signRequest({
            key,
            method: 'POST',
            path: '/api/tickets',
            body,
            timestamp: Math.floor(t.clock.now / 1000),
          }),
          'content-type': 'application/json',
        },
        payload: body,
      });
      assert.equal(signed.statusCode, 403, signed.body);
      assert.equal(signed.json().permission, 'tickets.write');
      const read = await t.app.inject({
        method: 'GET',
        url: '/api/account/me',
        headers: signRequest({
          key,
          method: 'GET',
          path: '/api/account/me',
          body: '',
          timestamp: Math.floor(t.clock.now / 1000),
        }),
      });
      assert.equal(read.json().data.email, viewer.email);
    });

    test('billing reads products and billing only', async () => {
      const billing = members.billing!;
      assert.equal((await inTeam(billing, 'GET', '/api/products')).statusCode, 200);
      assert.equal((await inTeam(billing, 'GET', '/api/billing/summary')).statusCode, 200);
      const servers = await inTeam(billing, 'GET', '/api/servers');
      assert.equal(servers.statusCode, 403);
      assert.equal(servers.json().permission, 'fleet.read');
    });

    test("another team's id is 404, and a malformed one 400 naming the header", async () => {
      const stranger = await registerUser(t.app);
      const res = await inTeam(stranger, 'GET', '/api/servers');
      assert.equal(res.statusCode, 404);
      const bad = await t.app.inject({
        method: 'GET',
        url: '/api/servers',
        headers: { cookie: stranger.cookie, 'x-palisade-team': 'abc' },
      });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().error, /X-Palisade-Team/);
    });
  });
}
