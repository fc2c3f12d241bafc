import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Team } from '@palisade/protocol';
import { totpCode, totpStep } from '@palisade/protocol/totp';
import { assertAccessible, browserSkipReason, screenshot } from '../support/browser.js';
import { addServerRow, consoleWithOwner, inviteLink, JOINER, OWNER, signInHere, teamOf } from '../support/teams.js';

const skip = browserSkipReason();
const ADMIN = { email: 'ann@example.com', password: 'a fourth long password', name: 'Ann Admin' };
const PHONE = { width: 375, height: 812 };

/**
 * A team that requires two-factor sign-in, in the dashboard (docs/dashboard.md, "Teams"): the
 * owner's switch in Settings → Members, and a member without it sent to turn it on before
 * anything else in that team, against a real console.
 */
describe('a team that requires two-factor sign-in, in the browser', { skip: skip ?? false }, () => {
  const { suite, api } = consoleWithOwner('palisade-web-team-2fa-');

  test('an owner requires two-factor; a member without it is sent to turn it on first, then back; admins see the switch off', async () => {
    const teams = (await api<{ teams: Team[] }>('GET', '/api/teams')).body.data!.teams;
    const acme = teams[0]!.id;
    assert.equal((await api('PATCH', `/api/teams/${acme}`, { name: 'Acme' })).status, 200);
    const made = await api<{ team: Team }>('POST', '/api/teams', { name: 'Night shift' });
    assert.equal(made.status, 201, made.body.error);
    const night = made.body.data!.team.id;
    await addServerRow(api, suite.dataDir, acme, 'acme-web-1');
    await addServerRow(api, suite.dataDir, night, 'night-db-1');
    const serverId = (await api<{ servers: { id: number }[] }>('GET', '/api/servers', undefined, undefined, night)).body
      .data!.servers[0]!.id;

    // Jo signs up through a link to Night shift (operator), then joins Acme (viewer); Ann joins Night shift as an admin.
    const accept = async (link: string, body: unknown, cookie = '') => {
      const res = await fetch(`${suite.url}/api/invitations/${link.split('/').pop()}/accept`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
        body: JSON.stringify(body),
      });
      assert.equal(res.status, 200, await res.text());
      return res.headers.get('set-cookie')?.split(';')[0] ?? cookie;
    };
    const joinerCookie = await accept(await inviteLink(api, 'operator', JOINER.email, night), JOINER);
    await accept(await inviteLink(api, 'viewer', JOINER.email, acme), {}, joinerCookie);
    await accept(await inviteLink(api, 'admin', ADMIN.email, night), ADMIN);

    // An owner without two-factor cannot require it (the console answers 409): the switch says why.
    await suite.run(async (page) => {
      await page.goto(`/dashboard/settings/members?team=${night}`);
      await signInHere(page, OWNER);
      const toggle = page.getByRole('switch', { name: 'Require two-factor sign-in for every member' });
      await toggle.waitFor();
      await page.getByText('Turn on two-factor sign-in for your own account first').waitFor();
      assert.equal(await toggle.isDisabled(), true);
    });
    const early = await api('PATCH', `/api/teams/${night}`, { require_two_factor: true });
    assert.equal(early.status, 409, 'the console refuses it too');

    // The owner has two-factor on (through the API), so turning the requirement on does not lock them out.
    const setup = await api<{ secret: string }>('POST', '/api/account/two-factor/setup', { password: OWNER.password });
    assert.equal(setup.status, 200, setup.body.error);
    const ownerSecret = setup.body.data!.secret;
    const step = totpStep(Date.now());
    const enabled = await api('POST', '/api/account/two-factor/enable', { code: totpCode(ownerSecret, step) });
    assert.equal(enabled.status, 200, enabled.body.error);

    // An admin sees the switch, off, with the note why.
    await suite.run(async (page) => {
      await page.goto(`/dashboard/settings/members?team=${night}`);
      await signInHere(page, ADMIN);
      const toggle = page.getByRole('switch', { name: 'Require two-factor sign-in for every member' });
      await toggle.waitFor();
      assert.equal(await toggle.isDisabled(), true);
      const note = page.locator('p.note', { hasText: 'Admins cannot require two-factor sign-in' });
      await note.waitFor();
      assert.match(
        (await note.textContent()) ?? '',
        /it needs the security\.write permission\. Ask an owner of the team\.$/,
      );
    });

    // The owner: how many lack it, asked first, then the result.
    await suite.run(async (page) => {
      await page.goto(`/dashboard/settings/members?team=${night}`);
      await signInHere(page, OWNER);
      await page.getByLabel('Code', { exact: true }).fill(totpCode(ownerSecret, step + 1));
      await page.getByRole('button', { name: 'Sign in' }).click();
      const toggle = page.getByRole('switch', { name: 'Require two-factor sign-in for every member' });
      await toggle.waitFor();
      await page.getByText('2 of 3 members do not have two-factor sign-in yet.').waitFor();
      await toggle.click();
      const ask = page.getByRole('dialog', { name: 'Require two-factor sign-in in Night shift?' });
      await ask.getByText(`2 members do not have it yet: ${JOINER.name}, ${ADMIN.name}.`).waitFor();
      await screenshot(page, 'team-require-2fa');
      await assertAccessible(page, 'the two-factor requirement, asking');
      await ask.getByRole('button', { name: 'Require two-factor sign-in' }).click();
      await page
        .getByText(
          'Two-factor sign-in is now required in Night shift. 2 members without it are asked to turn it on before anything else.',
        )
        .waitFor();
      assert.equal(await toggle.isChecked(), true);
      await page.setViewportSize(PHONE);
      await toggle.evaluate((t) => t.scrollIntoView({ block: 'center' }));
      await screenshot(page, 'team-require-2fa-375');
    });
    const after = (await api<{ teams: Team[] }>('GET', '/api/teams')).body.data!.teams;
    assert.deepEqual(
      after.filter((t) => [acme, night].includes(t.id)).map((t) => [t.name, t.require_two_factor]),
      [
        ['Acme', false],
        ['Night shift', true],
      ],
    );

    // A member without it: every page of Night shift sends them to turn it on; Acme stays open; then back.
    await suite.run(async (page) => {
      const enrolAddress = (u: URL) => u.pathname === '/dashboard/two-factor-required';
      await page.goto(`/dashboard?team=${night}`);
      await signInHere(page, JOINER);
      await page.waitForURL(enrolAddress);
      await page.getByText('Night shift requires two-factor sign-in of every member.').waitFor();
      assert.equal(new URL(page.url()).searchParams.get('next'), `/dashboard?team=${night}`);
      assert.equal(teamOf(page.url()), night);
      assert.equal(await page.getByRole('link', { name: 'night-db-1' }).count(), 0);
      await screenshot(page, 'team-2fa-enrol-required');
      await assertAccessible(page, 'two-factor sign-in required');

      // Another page of the team, opened by its address: sent there again, and it remembers which page.
      await page.goto(`/dashboard/servers/${serverId}?team=${night}`);
      await page.waitForURL(
        (u) => enrolAddress(u) && u.searchParams.get('next') === `/dashboard/servers/${serverId}?team=${night}`,
      );
      assert.equal(await page.getByRole('heading', { name: 'night-db-1' }).count(), 0);

      // Acme does not require it: switching there works, and switching back asks again.
      await page.getByLabel('Team', { exact: true }).selectOption(String(acme));
      await page.getByRole('link', { name: 'acme-web-1' }).waitFor();
      assert.equal(teamOf(page.url()), acme);
      await page.getByLabel('Team', { exact: true }).selectOption(String(night));
      await page.waitForURL((u) => enrolAddress(u) && u.searchParams.get('team') === String(night));

      // Turned on here: the secret, a code computed from it, the recovery codes; then the fleet of Night shift.
      await page.getByLabel('Current password').fill(JOINER.password);
      await page.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      const secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').trim();
      await page.getByLabel('Code from the app').fill(totpCode(secret, totpStep(Date.now())));
      await page.getByRole('button', { name: 'Turn on' }).click();
      await page.getByTestId('recovery-codes').waitFor();
      await page.getByRole('button', { name: 'I have saved them' }).click();
      await page.getByRole('link', { name: 'night-db-1' }).waitFor();
      assert.equal(new URL(page.url()).pathname, '/dashboard');
      assert.equal(teamOf(page.url()), night);
    });

    // On a phone: Ann, an admin without it, lands on the same page.
    await suite.run(async (page) => {
      await page.goto(`/dashboard/settings/members?team=${night}`);
      await signInHere(page, ADMIN);
      await page.waitForURL((u) => u.pathname === '/dashboard/two-factor-required');
      await page.getByText('Night shift requires two-factor sign-in of every member.').waitFor();
      assert.equal(new URL(page.url()).searchParams.get('next'), `/dashboard/settings/members?team=${night}`);
      await screenshot(page, 'team-2fa-enrol-required-375');
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true);
    }, PHONE);
  });
});
