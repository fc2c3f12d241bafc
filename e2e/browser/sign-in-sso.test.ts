import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startOidcProvider } from '@palisade/console/oidc-provider';
import { type Captured, closedPort } from '@palisade/testkit';
import type { Page } from 'playwright-core';
import { assertAccessible, browserSkipReason, consoleWithBrowser, screenshot } from '../support/browser.js';

const skip = browserSkipReason();
const CLIENT = { id: 'palisade-console', secret: 'a client secret shared with the test provider' };
const consolePort = await closedPort();
const providerPort = await closedPort();
const publicUrl = `http://127.0.0.1:${consolePort}`;

/** From the sign-in page: the single sign-on button, then the test provider's form as `sub`. */
async function signInThroughProvider(page: Page, sub: string) {
  await page.getByRole('link', { name: 'Sign in with Example SSO' }).click();
  await page.getByRole('heading', { name: 'Test OpenID provider' }).waitFor();
  await page.getByLabel('Account').fill(sub);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * The sign-in page with single sign-on (docs/teams.md, "Single sign-on"): the button named after
 * the provider, a sign-in through a real OpenID provider process and back, and a refusal shown.
 */
describe('single sign-on in the browser', { skip: skip ?? false }, () => {
  let provider: Captured | undefined;
  before(async () => {
    provider = await startOidcProvider(
      providerPort,
      { ...CLIENT, redirectUri: `${publicUrl}/api/auth/oidc/callback` },
      {
        alice: { email: 'alice@example.com', email_verified: true, name: 'Alice Example', groups: [] },
        eve: { email: 'eve@elsewhere.test', email_verified: true, name: 'Eve', groups: [] },
        sam: { email: 'sam@example.com', email_verified: true, name: 'Sam Example', groups: [] },
      },
    );
  });
  after(async () => {
    await provider?.stop();
  });
  const suite = consoleWithBrowser('palisade-web-sso-', {
    PALISADE_PORT: String(consolePort),
    PALISADE_PUBLIC_URL: publicUrl,
    PALISADE_OIDC_ISSUER: `http://127.0.0.1:${providerPort}`,
    PALISADE_OIDC_CLIENT_ID: CLIENT.id,
    PALISADE_OIDC_CLIENT_SECRET: CLIENT.secret,
    PALISADE_OIDC_NAME: 'Example SSO',
    PALISADE_OIDC_ALLOWED_DOMAINS: 'example.com',
  });

  test('"Sign in with Example SSO" goes through the provider and back to the page asked for', async () => {
    await suite.run(async (page) => {
      await page.goto('/dashboard/settings/account');
      await page.waitForURL('**/dashboard/sign-in?next=*');
      const button = page.getByRole('link', { name: 'Sign in with Example SSO' });
      await button.waitFor();
      await assertAccessible(page, 'sign-in page with single sign-on');
      await screenshot(page, 'sign-in-sso');
      await signInThroughProvider(page, 'alice');
      await page.waitForURL('**/dashboard/settings/account**');
      await page.getByText('Alice Example', { exact: true }).first().waitFor();
    });
  });

  test('the Account page of a person without a password: no password forms, the provider named, closed after a fresh sign-in', async () => {
    await suite.run(
      async (page) => {
        await page.goto('/dashboard/settings/account');
        await signInThroughProvider(page, 'sam');
        await page.waitForURL('**/dashboard/settings/account**');
        const line = page.getByText('You sign in through Example SSO.');
        await line.waitFor();
        assert.match(
          (await line.textContent()) ?? '',
          /^You sign in through Example SSO\. Your password and second factor are managed there, not here\.$/,
        );
        // The same render that shows the line has no form asking for a password they do not have.
        assert.equal(await page.getByRole('form', { name: 'Change password' }).count(), 0);
        assert.equal(await page.getByLabel('Current password').count(), 0);
        assert.equal(await page.getByRole('form', { name: 'Turn on two-factor sign-in' }).count(), 0);
        await page.getByText('Your sign-in through Example SSO covers it').waitFor();
        const again = page.getByRole('link', { name: 'Sign in again to confirm' });
        assert.equal(
          await again.getAttribute('href'),
          '/api/auth/oidc/start?return_to=%2Fdashboard%2Fsettings%2Faccount%23delete-account',
        );
        await assertAccessible(page, 'account page of a single sign-on person');
        await screenshot(page, 'account-sso');
        // The provider still knows the browser: the sign-in comes straight back to the panel.
        await again.click();
        await page.waitForURL('**/dashboard/settings/account#delete-account');
        await page.getByLabel('Your email, to confirm').fill('sam@example.com');
        await page.getByRole('button', { name: 'Delete my account' }).click();
        await page.waitForURL('**/dashboard/sign-in**');
        const gone = await page.request.get('/api/auth/session');
        assert.deepEqual(await gone.json(), { data: { account: null } });
      },
      { width: 1280, height: 1250 },
    );
  });

  test('a refusal comes back to the sign-in page, which says why', async () => {
    await suite.run(async (page) => {
      await page.goto('/dashboard/sign-in');
      await signInThroughProvider(page, 'eve');
      await page.waitForURL('**/dashboard/sign-in?sso_error=*');
      const alert = page.getByRole('alert');
      await alert.waitFor();
      assert.match(
        (await alert.textContent()) ?? '',
        /Single sign-on did not sign you in: e-mail addresses at elsewhere\.test may not sign in here/,
      );
    });
  });
});
