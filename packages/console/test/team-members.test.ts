import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TeamRole } from '@palisade/protocol';
import { totpCode, totpStep } from '@palisade/protocol/totp';
import { findListedMember, pageTeamMembers } from '../src/repositories/team-members.repository.js';
import { hasSecondFactor } from '../src/services/accounts.service.js';
import {
  createToken,
  dialects,
  insertTestServer,
  joinTeam,
  registerUser,
  type TestApp,
  type TestUser,
  testApp,
  uniqueEmail,
} from './support.js';

for (const dialect of dialects()) {
  describe(`teams and members (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(dialect);
    });
    after(() => t.close());

    const join = (teamId: number, person: TestUser, role: TeamRole) => joinTeam(t, teamId, person, role);
    const as = (who: TestUser, teamId: number, method: string, url: string, body?: unknown) =>
      t.app.inject({
        method: method as 'GET',
        url,
        headers: {
          cookie: who.cookie,
          'x-palisade-team': String(teamId),
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
      });
    /** The person's first team (their own): its id is the person's only while sign-ups alone made teams. */
    const teamOf = async (who: TestUser) => {
      const res = await t.app.inject({ method: 'GET', url: '/api/teams', headers: { cookie: who.cookie } });
      return res.json().data.teams[0].id as number;
    };
    /** The user as insertTestServer takes them: `id` is the team the server goes to. */
    const inTeamOf = async (who: TestUser) => ({ ...who, id: await teamOf(who) });
    const v1 = (token: string, url = '/api/v1/servers') =>
      t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${token}` } });

    test('a person creates, renames and deletes a team of their own; a team with servers is kept', async () => {
      const owner = await registerUser(t.app);
      const created = await t.app.inject({
        method: 'POST',
        url: '/api/teams',
        headers: { cookie: owner.cookie, 'content-type': 'application/json' },
        payload: JSON.stringify({ name: 'Night shift' }),
      });
      assert.equal(created.statusCode, 201, created.body);
      const team = created.json().data.team;
      assert.equal(team.role, 'owner');
      const listed = await t.app.inject({ method: 'GET', url: '/api/teams', headers: { cookie: owner.cookie } });
      assert.deepEqual(
        listed.json().data.teams.map((x: { name: string; role: string }) => [x.name, x.role]),
        [
          ['Test User', 'owner'],
          ['Night shift', 'owner'],
        ],
      );
      const renamed = await as(owner, team.id, 'PATCH', `/api/teams/${team.id}`, { name: 'Day shift' });
      assert.equal(renamed.json().data.team.name, 'Day shift');
      const bad = await as(owner, team.id, 'PATCH', `/api/teams/${team.id}`, { name: '' });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().error, /name/);

      // The first team has a server: it stays, and the answer names the server.
      const first = await teamOf(owner);
      assert.equal((await insertTestServer(t.app, await inTeamOf(owner), { name: 'db-1' })).name, 'db-1');
      const kept = await as(owner, first, 'DELETE', `/api/teams/${first}`);
      assert.equal(kept.statusCode, 409);
      assert.match(kept.json().error, /db-1/);
      // The second has none: it goes, and the session carries on in the first.
      const gone = await as(owner, team.id, 'DELETE', `/api/teams/${team.id}`);
      assert.equal(gone.statusCode, 200, gone.body);
      assert.equal((await as(owner, team.id, 'GET', '/api/servers')).statusCode, 404, 'that team is gone');
      const home = await t.app.inject({ method: 'GET', url: '/api/servers', headers: { cookie: owner.cookie } });
      assert.deepEqual(
        home.json().data.servers.map((x: { label: string }) => x.label),
        ['db-1'],
      );
    });

    test('members are listed with role and two-factor; roles change within the rules; the last owner stays', async () => {
      const owner = await registerUser(t.app);
      const admin = await registerUser(t.app);
      const operator = await registerUser(t.app);
      const viewer = await registerUser(t.app);
      const team = await teamOf(owner);
      await join(team, admin, 'admin');
      await join(team, operator, 'operator');
      await join(team, viewer, 'viewer');

      const members = (await as(viewer, team, 'GET', '/api/team/members')).json().data.members;
      assert.deepEqual(
        members.map((m: { email: string; role: string; two_factor: boolean }) => [m.email, m.role, m.two_factor]),
        [
          [owner.email, 'owner', false],
          [admin.email, 'admin', false],
          [operator.email, 'operator', false],
          [viewer.email, 'viewer', false],
        ],
      );
      assert.ok(members[0].last_active_at > 0, 'the owner signed in');

      // An operator controls but does not manage members.
      const byOperator = await as(operator, team, 'PATCH', `/api/team/members/${viewer.id}`, { role: 'operator' });
      assert.equal(byOperator.statusCode, 403);
      assert.equal(byOperator.json().permission, 'members.manage');
      // Nobody gives a role above their own, or acts on a member above them.
      const above = await as(admin, team, 'PATCH', `/api/team/members/${viewer.id}`, { role: 'owner' });
      assert.equal(above.statusCode, 403);
      assert.match(above.json().error, /^role: /);
      const onOwner = await as(admin, team, 'PATCH', `/api/team/members/${owner.id}`, { role: 'viewer' });
      assert.equal(onOwner.statusCode, 403);
      const badRole = await as(admin, team, 'PATCH', `/api/team/members/${viewer.id}`, { role: 'root' });
      assert.equal(badRole.statusCode, 400);
      assert.match(badRole.json().error, /role/);
      const stranger = await as(admin, team, 'PATCH', '/api/team/members/999999', { role: 'viewer' });
      assert.equal(stranger.statusCode, 404);
      // The last owner can be neither demoted nor removed.
      const demote = await as(owner, team, 'PATCH', `/api/team/members/${owner.id}`, { role: 'admin' });
      assert.equal(demote.statusCode, 409);
      assert.match(demote.json().error, /^role: .*last owner/);
      const leave = await as(owner, team, 'DELETE', `/api/team/members/${owner.id}`);
      assert.equal(leave.statusCode, 409);

      // A role change takes effect on the member's next request, and revokes their tokens there.
      const token = await (async () => {
        const res = await as(operator, team, 'POST', '/api/tokens', { name: 'ops' });
        assert.equal(res.statusCode, 201, res.body);
        return res.json().data.token as string;
      })();
      assert.equal((await v1(token)).statusCode, 200);
      const changed = await as(admin, team, 'PATCH', `/api/team/members/${operator.id}`, { role: 'viewer' });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal(changed.json().data.member.role, 'viewer');
      assert.equal((await v1(token)).statusCode, 401, 'the token in that team is revoked');
      const write = await as(operator, team, 'POST', '/api/fleet/entries', {
        list: 'black',
        ip: '198.51.100.4',
        scope: 'all',
      });
      assert.equal(write.statusCode, 403);

      // Ownership passes on: an owner makes another member owner, then may step down.
      assert.equal(
        (await as(owner, team, 'PATCH', `/api/team/members/${admin.id}`, { role: 'owner' })).statusCode,
        200,
      );
      assert.equal(
        (await as(owner, team, 'PATCH', `/api/team/members/${owner.id}`, { role: 'admin' })).statusCode,
        200,
      );

      // The audit log names who changed what, in the team.
      const audit = (await as(admin, team, 'GET', '/api/audit')).json().data.entries as Array<{
        action: string;
        actor: string;
        summary: string;
      }>;
      assert.ok(
        audit.some((e) => e.action === 'member.role' && e.actor === admin.email && e.summary.includes(operator.email)),
      );
      assert.ok(
        audit.some((e) => e.action === 'member.role' && e.actor === owner.email && e.summary.includes('→ owner')),
      );
    });

    test('the members list pages oldest first with next_cursor and total, and finds a name or e-mail', async () => {
      // Addresses of their own: sign-ups are limited per address (docs/security.md).
      const owner = await registerUser(t.app, '192.0.2.10');
      const team = await teamOf(owner);
      const joined: TestUser[] = [];
      for (let i = 0; i < 5; i += 1) {
        const person = await registerUser(t.app, `192.0.2.${11 + i}`);
        joined.push(person);
        t.clock.advance(1000);
        await join(team, person, 'viewer');
      }
      await t.db.updateTable('people').set({ name: 'Zoë 50%_off' }).where('id', '=', joined[3]!.id).execute();
      const page = async (query: string) => {
        const res = await as(owner, team, 'GET', `/api/team/members${query}`);
        assert.equal(res.statusCode, 200, res.body);
        return res.json().data as { members: { email: string }[]; next_cursor: string | null; total: number };
      };
      const emails = [owner, ...joined].map((p) => p.email);
      const first = await page('?limit=4');
      assert.deepEqual([first.members.map((m) => m.email), first.total], [emails.slice(0, 4), 6]);
      const second = await page(`?limit=4&cursor=${first.next_cursor}`);
      assert.deepEqual(
        [second.members.map((m) => m.email), second.next_cursor, second.total],
        [emails.slice(4), null, 6],
      );
      assert.equal((await page('')).members.length, 6, 'the first 50 without limit');
      // The search: a part of the e-mail in another case, a name with % and _ taken literally.
      const byEmail = await page(`?q=${encodeURIComponent(joined[1]!.email.slice(0, -6).toUpperCase())}`);
      assert.deepEqual([byEmail.members.map((m) => m.email), byEmail.total], [[joined[1]!.email], 1]);
      const literal = await page(`?q=${encodeURIComponent('50%_o')}`);
      assert.deepEqual(
        literal.members.map((m) => m.email),
        [joined[3]!.email],
      );
      assert.deepEqual((await page(`?q=${encodeURIComponent('5%o')}`)).members, [], '% is no wildcard');
      assert.equal((await page('?q=%20%20')).total, 6, 'a blank search is none');
      for (const [query, message] of [
        ['?limit=0', 'limit: expected an integer from 1 to 200'],
        ['?limit=201', 'limit: expected an integer from 1 to 200'],
        ['?cursor=abc', 'cursor: expected the next_cursor of an earlier page'],
        [`?q=${'x'.repeat(101)}`, 'q: expected at most 100 characters of a name or e-mail'],
      ]) {
        const res = await as(owner, team, 'GET', `/api/team/members${query}`);
        assert.equal(res.statusCode, 400, query);
        assert.equal(res.json().error, message);
      }
    });

    test('two owners demoting each other at once leave the team one owner', async () => {
      // Eight teams at once, each with two owners demoting each other: without the team held for
      // the change (lockTeam), PostgreSQL lets both demotions of a pair read two owners.
      const pairs = await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const first = await registerUser(t.app, `198.51.100.${100 + 2 * i}`);
          const second = await registerUser(t.app, `198.51.100.${101 + 2 * i}`);
          const team = await teamOf(first);
          await join(team, second, 'owner');
          return { first, second, team };
        }),
      );
      const answers = await Promise.all(
        pairs.flatMap(({ first, second, team }) => [
          as(first, team, 'PATCH', `/api/team/members/${second.id}`, { role: 'admin' }),
          as(second, team, 'PATCH', `/api/team/members/${first.id}`, { role: 'admin' }),
        ]),
      );
      for (const [i, { team }] of pairs.entries()) {
        // The one that went second finds itself no longer an owner (403), the last owner (409), or
        // signed out of the team by the change (401): never a second success.
        const pair = answers.slice(2 * i, 2 * i + 2);
        assert.equal(pair.filter((a) => a.statusCode === 200).length, 1, pair.map((a) => a.body).join(' '));
        const owners = await t.db
          .selectFrom('team_members')
          .select('person_id')
          .where('account_id', '=', team)
          .where('role', '=', 'owner')
          .execute();
        assert.equal(owners.length, 1, `team ${team}`);
      }
    });

    test('an owner requires two-factor sign-in: a member without it may only turn it on', async () => {
      const owner = await registerUser(t.app, '198.51.100.51');
      const admin = await registerUser(t.app, '198.51.100.52');
      const team = await teamOf(owner);
      await join(team, admin, 'admin');
      const byAdmin = await as(admin, team, 'PATCH', `/api/teams/${team}`, { require_two_factor: true });
      assert.equal(byAdmin.statusCode, 403);
      assert.equal(byAdmin.json().permission, 'security.write');
      // The owner without two-factor cannot turn it on: the next request would lock them out.
      const early = await as(owner, team, 'PATCH', `/api/teams/${team}`, { require_two_factor: true });
      assert.equal(early.statusCode, 409, early.body);
      assert.match(early.json().error, /^require_two_factor: turn on two-factor sign-in for your own account first/);
      assert.equal((await as(admin, team, 'GET', '/api/servers')).statusCode, 200, 'nothing changed');
      const enrol = async (who: typeof owner) => {
        const setup = await as(who, team, 'POST', '/api/account/two-factor/setup', { password: who.password });
        assert.equal(setup.statusCode, 200, setup.body);
        const enabled = await as(who, team, 'POST', '/api/account/two-factor/enable', {
          code: totpCode(setup.json().data.secret, totpStep(t.clock.now)),
        });
        assert.equal(enabled.statusCode, 200, enabled.body);
      };
      await enrol(owner);
      const set = await as(owner, team, 'PATCH', `/api/teams/${team}`, { require_two_factor: true });
      assert.equal(set.statusCode, 200, set.body);
      assert.equal(set.json().data.team.require_two_factor, true);

      // The admin has no two-factor: asked to enrol before anything else.
      const refused = await as(admin, team, 'GET', '/api/servers');
      assert.equal(refused.statusCode, 403);
      assert.equal(refused.json().code, 'two_factor_required');
      assert.equal((await as(owner, team, 'GET', '/api/servers')).statusCode, 200, 'the owner has it');
      // What is the person's own still answers without it.
      const own = await t.app.inject({ method: 'GET', url: '/api/teams', headers: { cookie: admin.cookie } });
      assert.equal(own.statusCode, 200);
      let members = (await as(owner, team, 'GET', '/api/team/members')).json().data.members;
      assert.deepEqual(
        members.map((m: { two_factor: boolean }) => m.two_factor),
        [true, false],
      );
      const lacking = (await as(owner, team, 'GET', '/api/team/members?two_factor=off')).json().data;
      assert.deepEqual(
        [lacking.members.map((m: { person_id: number }) => m.person_id), lacking.total],
        [[admin.id], 1],
        'only those without it',
      );
      const having = (await as(owner, team, 'GET', '/api/team/members?two_factor=on')).json().data;
      assert.deepEqual(
        having.members.map((m: { person_id: number }) => m.person_id),
        [owner.id],
      );
      const bad = await as(owner, team, 'GET', '/api/team/members?two_factor=maybe');
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().error, /^two_factor: expected on or off/);
      await enrol(admin);
      assert.equal((await as(admin, team, 'GET', '/api/servers')).statusCode, 200, 'enrolled: the team answers');
      members = (await as(admin, team, 'GET', '/api/team/members')).json().data.members;
      assert.deepEqual(
        members.map((m: { two_factor: boolean }) => m.two_factor),
        [true, true],
      );
    });

    test('the members list (SQL) and hasSecondFactor (TypeScript) agree on who meets a two-factor requirement', async () => {
      const owner = await registerUser(t.app, '198.51.100.61');
      const team = await teamOf(owner);
      // Every combination of the columns both read. The TOTP columns are written to the row itself:
      // the API gives no code of ours to a person without a password, but the two must agree on any row.
      const cases = [
        { name: 'password', password: true, totp: 'off', meets: false },
        { name: 'password and TOTP', password: true, totp: 'on', meets: true },
        { name: 'password, TOTP pending', password: true, totp: 'pending', meets: false },
        { name: 'single sign-on', password: false, totp: 'off', meets: true },
        { name: 'single sign-on and TOTP', password: false, totp: 'on', meets: true },
        { name: 'single sign-on, TOTP pending', password: false, totp: 'pending', meets: true },
      ] as const;
      const ids: number[] = [];
      for (const c of cases) {
        const { person } = await t.app.services.accounts.createPerson(
          { email: uniqueEmail('factor'), name: c.name, password: c.password ? 'correct horse battery' : null },
          async () => undefined,
        );
        await t.db
          .updateTable('people')
          .set({
            totp_secret_enc: c.totp === 'on' ? 'sealed secret' : null,
            totp_enabled_at: c.totp === 'on' ? t.clock.now : null,
            totp_pending_enc: c.totp === 'pending' ? 'sealed secret' : null,
          })
          .where('id', '=', person.id)
          .execute();
        await joinTeam(t, team, person, 'viewer');
        ids.push(person.id);
      }
      const filtered = async (twoFactor: boolean) =>
        (await pageTeamMembers(t.db, team, { twoFactor }, { after: null, limit: 100 })).items.map((m) => Number(m.id));
      const on = await filtered(true);
      const off = await filtered(false);
      const answers = [];
      for (const [i, c] of cases.entries()) {
        const id = ids[i]!;
        const row = await t.db.selectFrom('people').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
        const listed = await findListedMember(t.db, team, id);
        answers.push({
          case: c.name,
          typescript: hasSecondFactor(row),
          listed: Number(listed?.two_factor) === 1,
          'two_factor=on': on.includes(id),
          'two_factor=off': !off.includes(id),
        });
      }
      assert.deepEqual(
        answers,
        cases.map((c) => ({
          case: c.name,
          typescript: c.meets,
          listed: c.meets,
          'two_factor=on': c.meets,
          'two_factor=off': c.meets,
        })),
      );
    });

    test("removal ends the member's access at once: sessions in the team, tokens, and reads by id", async () => {
      const owner = await registerUser(t.app);
      const viewer = await registerUser(t.app);
      const team = await teamOf(owner);
      await join(team, viewer, 'viewer');
      await insertTestServer(t.app, await inTeamOf(owner), { name: 'shared-1' });
      const token = (await as(viewer, team, 'POST', '/api/tokens', { name: 'read-only' })).json().data.token as string;
      const listed = (await v1(token)).json().data.servers as Array<{ label: string }>;
      assert.deepEqual(
        listed.map((s) => s.label),
        ['shared-1'],
        "v1 shows the team's servers to a member's token",
      );
      assert.equal((await v1(token, '/api/v1/me')).json().data.email, viewer.email);
      // Its own team's token sees its own (empty) fleet.
      assert.deepEqual((await v1(await createToken(t.app, viewer))).json().data.servers, []);

      const removed = await as(owner, team, 'DELETE', `/api/team/members/${viewer.id}`);
      assert.equal(removed.statusCode, 200, removed.body);
      assert.equal((await v1(token)).statusCode, 401);
      assert.equal((await as(viewer, team, 'GET', '/api/servers')).statusCode, 404);
      const own = await t.app.inject({ method: 'GET', url: '/api/servers', headers: { cookie: viewer.cookie } });
      assert.equal(own.statusCode, 200, 'their own team is theirs still');
      const members = (await as(owner, team, 'GET', '/api/team/members')).json().data.members;
      assert.equal(members.length, 1);
      const audit = (await as(owner, team, 'GET', '/api/audit')).json().data.entries as Array<{ action: string }>;
      assert.ok(audit.some((e) => e.action === 'member.removed'));
    });

    test('a member may leave; closing an account that is the last owner of a shared team is refused', async () => {
      const owner = await registerUser(t.app, '198.51.100.41');
      const member = await registerUser(t.app, '198.51.100.42');
      const team = await teamOf(owner);
      await join(team, member, 'operator');
      const close = await t.app.inject({
        method: 'DELETE',
        url: '/api/account',
        headers: { cookie: owner.cookie, 'content-type': 'application/json' },
        payload: JSON.stringify({ password: owner.password }),
      });
      assert.equal(close.statusCode, 409);
      assert.match(close.json().error, /last owner/);
      const left = await as(member, team, 'DELETE', `/api/team/members/${member.id}`);
      assert.equal(left.statusCode, 200, left.body);
      assert.equal((await as(member, team, 'GET', '/api/servers')).statusCode, 404);
    });
  });
}
