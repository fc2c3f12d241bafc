import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { insertTeamMember } from '../src/repositories/team-members.repository.js';
import { INVITATION_TTL_MS } from '../src/services/invitations.service.js';
import { mailText, smtpReceiver } from './alerts-support.js';
import {
  dialects,
  registerUser,
  sessionCookieFrom,
  type TestApp,
  type TestUser,
  testApp,
  uniqueEmail,
} from './support.js';

for (const dialect of dialects()) {
  describe(`invitations (${dialect})`, () => {
    let t: TestApp;
    let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
    before(async () => {
      smtp = await smtpReceiver();
      t = await testApp(dialect, { PALISADE_SMTP_URL: smtp.url });
    });
    after(async () => {
      await t.close();
      await smtp.stop();
    });

    const send = (method: string, url: string, options: { cookie?: string; team?: number; body?: unknown } = {}) =>
      t.app.inject({
        method: method as 'GET',
        url,
        headers: {
          ...(options.cookie ? { cookie: options.cookie } : {}),
          ...(options.team ? { 'x-palisade-team': String(options.team) } : {}),
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(options.body === undefined ? {} : { payload: JSON.stringify(options.body) }),
      });
    const teamOf = async (who: TestUser) =>
      (await send('GET', '/api/teams', { cookie: who.cookie })).json().data.teams[0].id as number;
    const invite = (who: TestUser, team: number, body: unknown) =>
      send('POST', '/api/team/invitations', { cookie: who.cookie, team, body });
    const tokenOf = (link: string) => link.slice(link.lastIndexOf('/') + 1);
    const pending = async (who: TestUser, team: number) =>
      (await send('GET', '/api/team/invitations', { cookie: who.cookie, team })).json().data.invitations as Array<{
        id: number;
        email: string | null;
      }>;

    test('an invitation is mailed, shown once, single use, and names team, role and inviter', async () => {
      const owner = await registerUser(t.app);
      const team = await teamOf(owner);
      const guest = await registerUser(t.app);
      const created = await invite(owner, team, { email: guest.email, role: 'operator' });
      assert.equal(created.statusCode, 201, created.body);
      const { invitation, link, mailed } = created.json().data;
      assert.equal(mailed, true);
      assert.equal(invitation.role, 'operator');
      assert.match(link, /\/dashboard\/invitations\/[A-Za-z0-9_-]{43}$/);
      const mail = mailText((await smtp.next(smtp.messages.length || 1)).data);
      assert.ok(mail.includes(link), 'the link is in the mail');
      // Kept as its SHA-256 only, and never listed again.
      const rows = await t.db.selectFrom('team_invitations').select('token_hash').execute();
      assert.ok(rows.every((r) => r.token_hash !== tokenOf(link)));
      const listed = await send('GET', '/api/team/invitations', { cookie: owner.cookie, team });
      assert.equal(listed.json().data.invitations.length, 1);
      assert.ok(!listed.body.includes(tokenOf(link)));

      const preview = await send('GET', `/api/invitations/${tokenOf(link)}`);
      assert.equal(preview.statusCode, 200, preview.body);
      assert.deepEqual(
        { ...preview.json().data.invitation, expires_at: 0 },
        { team: 'Test User', role: 'operator', invited_by: 'Test User', email: guest.email, expires_at: 0 },
      );

      const accepted = await send('POST', `/api/invitations/${tokenOf(link)}/accept`, { cookie: guest.cookie });
      assert.equal(accepted.statusCode, 200, accepted.body);
      assert.deepEqual(accepted.json().data.team, {
        id: team,
        name: 'Test User',
        role: 'operator',
        require_two_factor: false,
      });
      const teams = (await send('GET', '/api/teams', { cookie: guest.cookie })).json().data.teams;
      assert.equal(teams.length, 2);
      assert.equal((await send('GET', '/api/servers', { cookie: guest.cookie, team })).statusCode, 200);

      const again = await send('POST', `/api/invitations/${tokenOf(link)}/accept`, {
        cookie: (await registerUser(t.app)).cookie,
      });
      assert.equal(again.statusCode, 410);
      assert.match(again.json().error, /^token: .*already used/);
      assert.equal((await send('GET', `/api/invitations/${tokenOf(link)}`)).statusCode, 410);
      assert.deepEqual(await pending(owner, team), []);

      const audit = (await send('GET', '/api/audit', { cookie: owner.cookie, team })).json().data.entries as Array<{
        action: string;
        actor: string;
      }>;
      assert.ok(audit.some((e) => e.action === 'invitation.created' && e.actor === owner.email));
      assert.ok(audit.some((e) => e.action === 'invitation.accepted' && e.actor === guest.email));
    });

    test('a link expires after 7 days and a revoked one is refused, each naming why', async () => {
      const owner = await registerUser(t.app);
      const team = await teamOf(owner);
      const expiring = tokenOf((await invite(owner, team, { role: 'viewer' })).json().data.link);
      const revoked = await invite(owner, team, { role: 'viewer' });
      assert.equal(revoked.json().data.mailed, false, 'no address, no mail');
      const id = revoked.json().data.invitation.id;
      assert.equal(
        (await send('DELETE', `/api/team/invitations/${id}`, { cookie: owner.cookie, team })).statusCode,
        200,
      );
      const twice = await send('DELETE', `/api/team/invitations/${id}`, { cookie: owner.cookie, team });
      assert.equal(twice.statusCode, 409);
      const refused = await send('GET', `/api/invitations/${tokenOf(revoked.json().data.link)}`);
      assert.equal(refused.statusCode, 410);
      assert.match(refused.json().error, /revoked/);

      assert.equal((await send('GET', `/api/invitations/${expiring}`)).statusCode, 200);
      t.clock.advance(INVITATION_TTL_MS);
      const expired = await send('POST', `/api/invitations/${expiring}/accept`, {
        body: { email: uniqueEmail('late'), name: 'Late', password: 'correct horse battery' },
      });
      assert.equal(expired.statusCode, 410);
      assert.match(expired.json().error, /expired/);
      assert.equal((await send('GET', '/api/invitations/not-a-token')).statusCode, 404);
    });

    test('accepting without a session signs a new person up, in the team with its role', async () => {
      const owner = await registerUser(t.app);
      const team = await teamOf(owner);
      const link = (await invite(owner, team, { role: 'billing' })).json().data.link as string;
      const email = uniqueEmail('invited');
      const bad = await send('POST', `/api/invitations/${tokenOf(link)}/accept`, { body: { email } });
      assert.equal(bad.statusCode, 400);
      assert.match(bad.json().error, /password|name/);
      const res = await send('POST', `/api/invitations/${tokenOf(link)}/accept`, {
        body: { email, name: 'Invited', password: 'correct horse battery' },
      });
      assert.equal(res.statusCode, 200, res.body);
      const cookie = sessionCookieFrom(res.headers['set-cookie']);
      const me = await send('GET', '/api/account/me', { cookie });
      assert.equal(me.json().data.email, email);
      assert.equal((await send('GET', '/api/products', { cookie, team })).statusCode, 200);
      const servers = await send('GET', '/api/servers', { cookie, team });
      assert.equal(servers.json().permission, 'fleet.read', 'billing reads products and billing only');
      const members = (await send('GET', '/api/team/members', { cookie: owner.cookie, team })).json().data.members;
      assert.deepEqual(
        members.map((m: { email: string; role: string }) => [m.email, m.role]),
        [
          [owner.email, 'owner'],
          [email, 'billing'],
        ],
      );
    });

    test('bad invitations are refused naming the field, and store nothing', async () => {
      const owner = await registerUser(t.app);
      const team = await teamOf(owner);
      const admin = await registerUser(t.app);
      await insertTeamMember(t.db, {
        account_id: team,
        person_id: admin.id,
        role: 'admin',
        granted: '[]',
        revoked: '[]',
        created_at: t.clock.now,
      });
      const badEmail = await invite(owner, team, { email: 'not an address', role: 'viewer' });
      assert.equal(badEmail.statusCode, 400);
      assert.match(badEmail.json().error, /email/);
      const badRole = await invite(owner, team, { role: 'root' });
      assert.equal(badRole.statusCode, 400);
      assert.match(badRole.json().error, /role/);
      const above = await invite(admin, team, { role: 'owner' });
      assert.equal(above.statusCode, 403);
      assert.match(above.json().error, /^role: /);
      const member = await invite(owner, team, { email: admin.email, role: 'viewer' });
      assert.equal(member.statusCode, 409);
      assert.match(member.json().error, /^email: /);
      assert.deepEqual(await pending(owner, team), []);

      // A member accepting again is refused, and the link stays usable by someone else.
      const link = (await invite(owner, team, { role: 'viewer' })).json().data.link as string;
      const already = await send('POST', `/api/invitations/${tokenOf(link)}/accept`, { cookie: admin.cookie });
      assert.equal(already.statusCode, 409);
      assert.equal((await pending(owner, team)).length, 1);
    });
  });
}
