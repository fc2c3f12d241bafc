import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { Team, TeamMember } from '@palisade/protocol';
import SQLite from 'better-sqlite3';
import { assertAccessible, browserSkipReason, registerWithProduct, screenshot } from '../support/browser.js';
import { addServerRow, consoleWithOwner, inviteLink, JOINER, OWNER, signInHere, teamOf } from '../support/teams.js';

const skip = browserSkipReason();
const OUTSIDER = { email: 'outsider@example.com', password: 'a third long password', name: 'Otto Outsider' };
const PHONE = { width: 375, height: 812 };

/**
 * Teams in the dashboard (docs/dashboard.md, "Teams"): the accept page, the team in the address
 * and its switcher, Settings → Members, and the role's disabled actions, against a real console.
 */
describe('teams in the browser', { skip: skip ?? false }, () => {
  const { suite, api } = consoleWithOwner('palisade-web-teams-');
  const invite = (role: string, email?: string, team?: number) => inviteLink(api, role, email, team);
  const addServer = (team: number, name: string) => addServerRow(api, suite.dataDir, team, name);
  const teamIds = async () => {
    const teams = (await api<{ teams: Team[] }>('GET', '/api/teams')).body.data!.teams;
    return { acme: teams.find((t) => t.name === 'Acme')!.id, night: teams.find((t) => t.name === 'Night shift')!.id };
  };

  test('a second person accepts through the page, signing up, and lands in the team', async () => {
    const firstTeam = (await api<{ teams: Team[] }>('GET', '/api/teams')).body.data!.teams[0]!;
    const ownerTeam = (await api<{ team: Team }>('PATCH', `/api/teams/${firstTeam.id}`, { name: 'Acme' })).body.data!
      .team;
    const link = await invite('operator', JOINER.email);
    const unknown = `${link.slice(0, -4)}AAAA`;
    await suite.run(async (page) => {
      // An unknown link: the console's words, and what to do.
      await page.goto(unknown);
      await page.getByText('Ask whoever invited you for a new link.').waitFor();

      await page.goto(link);
      await page.getByRole('heading', { name: `Join ${ownerTeam.name}` }).waitFor();
      await page.locator('dd', { hasText: 'Olivia Owner' }).waitFor();
      await page.locator('dd', { hasText: 'operator' }).waitFor();
      assert.equal(await page.getByLabel('Email').inputValue(), JOINER.email);
      await screenshot(page, 'team-accept');
      await assertAccessible(page, 'the accept page');
      await page.getByLabel('Name').fill(JOINER.name);
      await page.getByLabel('Password').fill('short');
      await page.getByRole('button', { name: `Create account and join ${ownerTeam.name}` }).click();
      await page.getByText(/at least 8/i).waitFor();
      await page.getByLabel('Password').fill(JOINER.password);
      await page.getByRole('button', { name: `Create account and join ${ownerTeam.name}` }).click();
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      assert.equal(new URL(page.url()).searchParams.get('team'), String(ownerTeam.id));

      // The link is single use: a second visit shows the console's refusal plainly.
      await page.goto(link);
      await page.getByText('Ask whoever invited you for a new link.').waitFor();
    });
    const members = (await api<{ members: TeamMember[] }>('GET', '/api/team/members')).body.data!.members;
    assert.deepEqual(
      members.map((m) => [m.email, m.role]),
      [
        [OWNER.email, 'owner'],
        [JOINER.email, 'operator'],
      ],
    );
  });

  test('a signed-in person joins with one button; signed out, "sign in first" comes back to the link', async () => {
    const second = await api<{ team: Team }>('POST', '/api/teams', { name: 'Night shift' });
    assert.equal(second.status, 201, second.body.error);
    const link = await invite('viewer', undefined, second.body.data!.team.id);
    await suite.run(async (page) => {
      await page.goto(link);
      await page.getByRole('link', { name: 'Sign in first' }).click();
      await signInHere(page, JOINER);
      const join = page.getByRole('button', { name: 'Join Night shift as viewer' });
      await join.waitFor();
      await screenshot(page, 'team-accept-signed-in');
      await join.click();
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      assert.equal(new URL(page.url()).searchParams.get('team'), String(second.body.data!.team.id));
    }, PHONE);
  });

  test('switching teams changes the fleet and the address; a shared link opens that team; another team is 404', async () => {
    const { acme, night } = await teamIds();
    await addServer(acme, 'acme-web-1');
    await addServer(night, 'night-db-1');
    await suite.run(async (page) => {
      await page.goto('/dashboard/sign-in');
      await signInHere(page, OWNER);
      await page.getByRole('link', { name: 'acme-web-1' }).waitFor();
      assert.equal(teamOf(page.url()), acme);
      await page.getByLabel('Team', { exact: true }).selectOption(String(night));
      await page.getByRole('link', { name: 'night-db-1' }).waitFor();
      assert.equal(teamOf(page.url()), night);
      assert.equal(await page.getByRole('link', { name: 'acme-web-1' }).count(), 0);
      await screenshot(page, 'team-switcher');
      await assertAccessible(page, 'the fleet with the team switcher');
      // A link inside the page keeps the team in the address.
      await page.getByRole('link', { name: 'night-db-1' }).click();
      await page.getByRole('heading', { name: 'night-db-1' }).waitFor();
      await page.waitForURL((u) => u.searchParams.get('team') === String(night));
      // A new team from the switcher: created, switched to, empty.
      await page.getByRole('button', { name: 'New team' }).click();
      await page.getByLabel("New team's name").fill('Lab');
      await page.getByRole('button', { name: 'Create team' }).click();
      await page.waitForURL((u) => ![acme, night].includes(Number(u.searchParams.get('team'))));
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      assert.equal(await page.getByRole('option', { name: 'Lab (owner)' }).count(), 1);
    });
    await suite.run(async (page) => {
      await page.goto('/dashboard/sign-in');
      await signInHere(page, OWNER);
      await page.getByRole('link', { name: 'acme-web-1' }).waitFor();
      await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByLabel('Team', { exact: true }).waitFor();
      await screenshot(page, 'team-switcher-375');
    }, PHONE);

    // The shared link, opened signed out by another member: signed in, they land in that team.
    await suite.run(async (page) => {
      await page.goto(`/dashboard?team=${night}`);
      await signInHere(page, JOINER);
      await page.getByRole('link', { name: 'night-db-1' }).waitFor();
      assert.equal(teamOf(page.url()), night);
      assert.equal(await page.getByRole('link', { name: 'acme-web-1' }).count(), 0);
    });

    // Someone who is not in the team: the console's 404, in words.
    await registerWithProduct(suite.url, OUTSIDER);
    await suite.run(async (page) => {
      await page.goto(`/dashboard?team=${night}`);
      await signInHere(page, OUTSIDER);
      await page.getByText('This team is not one of yours').waitFor();
      assert.equal(await page.getByText('night-db-1').count(), 0);
    });
  });

  test('Settings → Members: roles, refusals in words, invitations with their link once, 200 members paged', async () => {
    const { acme } = await teamIds();
    // 200 more members, written straight into the database (as a large company's team would be).
    const db = new SQLite(join(suite.dataDir, 'console.db'));
    try {
      const person = db.prepare(
        `insert into people (email, name, password_hash, role, created_at) values (?, ?, 'unused', 'user', ?)`,
      );
      const member = db.prepare(
        `insert into team_members (account_id, person_id, role, created_at) values (?, ?, 'viewer', ?)`,
      );
      db.transaction(() => {
        for (let i = 1; i <= 200; i++) {
          const row = person.run(`member${String(i).padStart(3, '0')}@example.com`, `Member ${i}`, Date.now());
          member.run(acme, Number(row.lastInsertRowid), Date.now() + i);
        }
      })();
    } finally {
      db.close();
    }
    await suite.run(async (page) => {
      await page.goto('/dashboard/sign-in');
      await signInHere(page, OWNER);
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      await page.goto(`/dashboard/settings/members?team=${acme}`);
      const table = page.getByRole('table', { name: 'Members' });
      await table.getByText(JOINER.email).waitFor();
      await page.getByText('Page 1 of 5 · 202 members').waitFor();
      assert.equal(await table.locator('tbody tr').count(), 50);
      await screenshot(page, 'team-members');
      await assertAccessible(page, 'Settings → Members');
      await page.getByRole('button', { name: 'Next →' }).click();
      await page.getByText('Page 2 of 5 · 202 members').waitFor();
      // The console's second page (oldest membership first): the owner, the joiner and member001–048 were the first.
      await table.getByText('member049@example.com', { exact: true }).waitFor();
      assert.equal(await table.getByText('member048@example.com', { exact: true }).count(), 0);
      assert.equal(await table.locator('tbody tr').count(), 50);
      await page.getByLabel('Find a member').fill('member187');
      await table.getByText('member187@example.com').waitFor();
      assert.equal(await table.locator('tbody tr').count(), 1);
      await page.getByLabel('Find a member').fill('');

      // A role change, through the row's select, asks first and says what it does; Cancel changes nothing.
      const roleChanges = async () =>
        (
          await api<{ entries: { action: string }[] }>('GET', '/api/audit?limit=200', undefined, undefined, acme)
        ).body.data!.entries.filter((e) => e.action === 'member.role').length;
      const changesBefore = await roleChanges();
      await page.getByLabel(`Role of ${JOINER.email}`).selectOption('viewer');
      const ask = page.getByRole('dialog', { name: `Make ${JOINER.name} a viewer?` });
      await ask.getByText(`${JOINER.name}'s sessions in Acme end at once`).waitFor();
      await ask.getByRole('button', { name: 'Cancel' }).click();
      await ask.waitFor({ state: 'hidden' });
      assert.equal(await page.getByLabel(`Role of ${JOINER.email}`).inputValue(), 'operator');
      assert.equal(await roleChanges(), changesBefore, 'Cancel sent nothing');
      const roleOf = async (email: string) =>
        (
          await api<{ members: TeamMember[] }>('GET', '/api/team/members', undefined, undefined, acme)
        ).body.data!.members.find((m) => m.email === email)?.role;
      assert.equal(await roleOf(JOINER.email), 'operator');
      await page.getByLabel(`Role of ${JOINER.email}`).selectOption('viewer');
      await ask.getByRole('button', { name: 'Make viewer' }).click();
      await page.getByLabel(`Role of ${JOINER.email}`).and(page.locator(':enabled')).waitFor();
      await page.waitForFunction(async (email) => {
        const res = await fetch('/api/team/members', {
          headers: { 'x-palisade-team': new URLSearchParams(location.search).get('team')! },
        });
        const body = (await res.json()) as { data: { members: { email: string; role: string }[] } };
        return body.data.members.find((m) => m.email === email)?.role === 'viewer';
      }, JOINER.email);
      assert.equal(await roleChanges(), changesBefore + 1);
      await page.getByLabel(`Role of ${OWNER.email}`).selectOption('admin');
      await page
        .getByRole('dialog', { name: 'Make yourself an admin?' })
        .getByRole('button', { name: 'Make admin' })
        .click();
      await page.getByText("The team's last owner cannot be demoted or removed").waitFor();
      await page.getByRole('button', { name: 'Leave team' }).click();
      await page.getByRole('button', { name: 'Leave Acme' }).click();
      // Under the Leave button too: a second copy of the refusal.
      await page.getByText("The team's last owner cannot be demoted or removed").nth(1).waitFor();

      // Invitations: an existing member refused under the field; a link made, shown once with Copy, then revoked.
      await page.getByLabel('Email (optional)').fill(JOINER.email);
      await page.getByRole('button', { name: 'Create invitation' }).click();
      await page.getByText(`${JOINER.email} is already a member of this team.`).waitFor();
      await page.getByLabel('Email (optional)').fill('');
      await page.getByLabel('Role', { exact: true }).selectOption('operator');
      await page.getByRole('button', { name: 'Create invitation' }).click();
      await page.getByText('Not mailed: send this link yourself.').waitFor();
      await page.getByRole('button', { name: 'Copy link' }).waitFor();
      const pending = page.getByRole('table', { name: 'Pending invitations' });
      await pending.getByText('link only').waitFor();
      await screenshot(page, 'team-invite');
      await pending.getByRole('button', { name: 'Revoke' }).click();
      await pending.getByRole('button', { name: 'Revoke this link' }).click();
      await page.getByText('No invitations waiting.').waitFor();
    });
    await suite.run(async (page) => {
      await page.goto(`/dashboard/settings/members?team=${acme}`);
      await signInHere(page, OWNER);
      await page.getByRole('table', { name: 'Members' }).getByText(JOINER.email).waitFor();
      await screenshot(page, 'team-members-375');
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true);
    }, PHONE);
  });

  test('a viewer sees the role and every write action off, with the note why', async () => {
    const { acme } = await teamIds();
    type Servers = { servers: { id: number; label: string }[] };
    const servers = (await api<Servers>('GET', '/api/servers', undefined, undefined, acme)).body.data!.servers;
    const server = servers.find((x) => x.label === 'acme-web-1')!;
    await suite.run(async (page) => {
      await page.goto(`/dashboard?team=${acme}`);
      await signInHere(page, JOINER);
      await page.getByRole('link', { name: 'acme-web-1' }).waitFor();
      await page.getByText('viewer', { exact: true }).waitFor();
      await page.getByText('Viewers cannot add or change servers').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Add server' }).isDisabled(), true);
      await screenshot(page, 'team-viewer-fleet');

      await page.goto(`/dashboard/servers/${server.id}/settings?team=${acme}`);
      await page.getByText('Viewers cannot change or remove servers').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Remove server' }).isDisabled(), true);

      await page.goto(`/dashboard/servers/${server.id}/protection/lists?team=${acme}`);
      await page.getByText('Viewers cannot change protection').waitFor();

      await page.goto(`/dashboard/settings/alerts?team=${acme}`);
      await page.getByText('Viewers cannot change alerts').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Add channel' }).isDisabled(), true);

      await page.goto(`/dashboard/settings/members?team=${acme}`);
      await page.getByText('Viewers cannot change members').waitFor();
      assert.equal(await page.getByLabel(`Role of ${OWNER.email}`).isDisabled(), true);
      assert.equal(await page.getByRole('button', { name: 'Invite' }).count(), 0);
      // Leaving is one's own: it stays on.
      assert.equal(await page.getByRole('button', { name: 'Leave team' }).isDisabled(), false);
    });
  });
});
