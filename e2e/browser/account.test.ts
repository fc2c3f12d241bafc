import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { totpCode, totpStep } from '@palisade/protocol/totp';
import type { Browser, Page } from 'playwright-core';
import qrcode from 'qrcode-generator';
import { browserSkipReason, launchBrowser, newSession, screenshot } from '../support/browser.js';
import { type ConsoleProcess, eventually, startConsoleProcess, tempDir } from '../support/processes.js';

const skip = browserSkipReason();
const USER = { email: 'account-basics@example.com', password: 'correct horse battery', name: 'Account Basics' };
const NEW_PASSWORD = 'a much longer new password';
const PHONE_UA =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';

/**
 * Account basics in the browser (docs/dashboard.md, "Settings, account"): change the password,
 * list and revoke sessions, turn on two-factor sign-in and sign in with a code and with a recovery
 * code, then delete the account. Codes are computed here from the secret the page shows.
 */
describe('account basics in the browser', { skip: skip ?? false }, () => {
  const data = tempDir('palisade-web-account-');
  let consoleProcess: ConsoleProcess;
  let browser: Browser;
  let registerCookie = '';

  const api = (path: string, init: { method?: string; cookie?: string; body?: unknown; ua?: string } = {}) =>
    fetch(`${consoleProcess.url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...(init.cookie ? { cookie: init.cookie } : {}),
        ...(init.ua ? { 'user-agent': init.ua } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
  const cookieOf = (res: Response) => res.headers.get('set-cookie')!.split(';')[0]!;

  before(async () => {
    consoleProcess = await startConsoleProcess({
      PALISADE_DATA_DIR: data.path,
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_ALLOW_PRIVATE_TARGETS: '1', // the webhook receiver below listens on loopback
    });
    const registered = await api('/api/auth/register', { method: 'POST', body: USER });
    assert.equal(registered.status, 201);
    registerCookie = cookieOf(registered);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await consoleProcess?.kill();
    data.remove();
  });

  async function signIn(page: Page, password: string) {
    await page.goto('/dashboard/sign-in');
    await page.getByLabel('Email').fill(USER.email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
  }

  async function signOut(page: Page) {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  }

  test('sessions, password, two-factor sign-in with a code and a recovery code, then delete the account', async () => {
    // A second browser, signed in from a phone: it shows in the list and is signed out from here.
    const phone = await api('/api/auth/login', {
      method: 'POST',
      body: { email: USER.email, password: USER.password },
      ua: PHONE_UA,
    });
    assert.equal(phone.status, 200);
    const phoneCookie = cookieOf(phone);

    const session = await newSession(browser, consoleProcess.url);
    const { page } = session;
    try {
      await signIn(page, USER.password);
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      await page.goto('/dashboard/settings/account');
      const sessions = page.getByRole('table', { name: 'Active sessions' });
      await sessions.getByText('this session').waitFor();
      await sessions.getByText('Safari on iOS').waitFor();
      assert.equal(await sessions.locator('tbody tr').count(), 3, 'registration, the phone and this browser');
      assert.match((await sessions.locator('tr', { hasText: 'this session' }).textContent()) ?? '', /Chrome on Linux/);
      await page.getByRole('heading', { name: 'Sessions' }).evaluate((h) => h.scrollIntoView({ block: 'start' }));
      await screenshot(page, 'settings-account');

      // Revoke the phone: its cookie stops working.
      await sessions.locator('tr', { hasText: 'Safari on iOS' }).getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign out Safari on iOS' }).click();
      await page.getByText('Safari on iOS was signed out.').waitFor();
      assert.equal((await api('/api/account/me', { cookie: phoneCookie })).status, 401);
      assert.equal(await sessions.locator('tbody tr').count(), 2);

      // Change the password: a wrong current one is refused by name; then the other session ends.
      const password = page.getByRole('form', { name: 'Change password' });
      await password.getByLabel('Current password').fill('not my password');
      await password.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
      await password.getByLabel('New password again').fill(NEW_PASSWORD);
      await password.getByRole('button', { name: 'Change password' }).click();
      // Under its field, in words: never the API's field name in a box.
      const current = password.getByLabel('Current password');
      await password
        .locator('.field-error')
        .filter({ hasText: /^Not the account's current password/ })
        .waitFor();
      assert.equal(await current.getAttribute('aria-invalid'), 'true');
      assert.equal(await password.getByText(/old_password/).count(), 0);
      await password.getByLabel('Current password').fill(USER.password);
      await password.getByRole('button', { name: 'Change password' }).click();
      await password.getByText('Password changed. 1 other session was signed out.').waitFor();
      assert.equal((await api('/api/account/me', { cookie: registerCookie })).status, 401);
      assert.equal(await sessions.locator('tbody tr').count(), 1);

      // Two-factor: the password, then the secret shown once, confirmed by a code computed from it.
      const twoFactor = page.getByRole('form', { name: 'Turn on two-factor sign-in' });
      await twoFactor.getByLabel('Current password').fill(NEW_PASSWORD);
      await twoFactor.getByRole('button', { name: 'Set up two-factor sign-in' }).click();
      const secret = ((await page.getByTestId('totp-secret').textContent()) ?? '').trim();
      assert.match(secret, /^[A-Z2-7]{32}$/);
      // The QR code holds the otpauth URI the link opens: every dark module where the encoder puts one.
      const uri = (await page.getByRole('link', { name: 'Open in authenticator app' }).getAttribute('href')) ?? '';
      assert.match(uri, new RegExp(`^otpauth://totp/.*secret=${secret}`));
      const qr = page.getByRole('img', { name: /^QR code of the two-factor secret/ });
      const drawn = new Set(
        [...((await qr.locator('path').getAttribute('d')) ?? '').matchAll(/M(\d+) (\d+)/g)].map(
          (m) => `${m[1]},${m[2]}`,
        ),
      );
      const code = qrcode(0, 'M');
      code.addData(uri);
      code.make();
      const expected = new Set<string>();
      for (let row = 0; row < code.getModuleCount(); row++)
        for (let col = 0; col < code.getModuleCount(); col++)
          if (code.isDark(row, col)) expected.add(`${col + 4},${row + 4}`);
      assert.deepEqual(drawn, expected);
      await qr.scrollIntoViewIfNeeded();
      await screenshot(page, 'settings-2fa-setup');
      const confirm = page.getByRole('form', { name: 'Confirm two-factor sign-in' });
      await confirm.getByLabel('Code from the app').fill(totpCode(secret, totpStep(Date.now())));
      await page
        .getByRole('heading', { name: 'Two-factor sign-in' })
        .evaluate((h) => h.scrollIntoView({ block: 'start' }));
      await screenshot(page, 'settings-2fa');
      const wrongCode = totpCode(secret, totpStep(Date.now())) === '000000' ? '111111' : '000000';
      await confirm.getByLabel('Code from the app').fill(wrongCode);
      await confirm.getByRole('button', { name: 'Turn on' }).click();
      await confirm
        .locator('.field-error')
        .filter({ hasText: /^Wrong code/ })
        .waitFor();
      assert.equal(await confirm.getByText(/^code: /).count(), 0);
      await confirm.getByLabel('Code from the app').fill(totpCode(secret, totpStep(Date.now())));
      await confirm.getByRole('button', { name: 'Turn on' }).click();
      const list = page.getByTestId('recovery-codes');
      await list.waitFor();
      const codes = (await list.locator('code').allTextContents()).map((c) => c.trim());
      assert.equal(codes.length, 10);
      await page.getByRole('button', { name: 'I have saved them' }).click();
      await page.getByText('10 of 10 recovery codes left.').waitFor();
      assert.equal(await page.getByTestId('totp-secret').count(), 0, 'the secret is not shown again');

      // Sign in again: the password alone gives no session; the code does. The enabling code's
      // time step is spent, so the next step's code (accepted one step either side) is used.
      await signOut(page);
      await signIn(page, NEW_PASSWORD);
      await page.getByRole('heading', { name: 'Two-factor code' }).waitFor();
      assert.equal((await session.context.cookies()).filter((c) => c.name === 'pl_session').length, 0);
      await page.getByLabel('Code', { exact: true }).fill('12345');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByText(/Type the 6 digits your authenticator app shows/).waitFor();
      await page.getByLabel('Code', { exact: true }).fill(totpCode(secret, totpStep(Date.now()) + 1));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();

      // And with a recovery code, which then counts as used.
      await signOut(page);
      await signIn(page, NEW_PASSWORD);
      await page.getByLabel('Code', { exact: true }).fill(codes[0]!);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      await page.goto('/dashboard/settings/account');
      await page.getByText('9 of 10 recovery codes left.').waitFor();

      // The security page names the events in words.
      await page.goto('/dashboard/settings/security');
      const events = page.getByRole('table', { name: 'Security events' });
      await events.getByText('Password changed').first().waitFor();
      await events.getByText('Two-factor sign-in turned on').first().waitFor();
      await events.getByText('Recovery code used').first().waitFor();
      assert.equal(await events.getByText('two_factor_enabled').count(), 0);

      // Delete the account: the email typed out, the password and a code.
      await page.goto('/dashboard/settings/account');
      const remove = page.getByRole('form', { name: 'Delete account' });
      await remove.getByLabel('Two-factor code').waitFor();
      await remove.getByRole('button', { name: 'Delete my account' }).click();
      await remove.getByText(`Type ${USER.email} to confirm.`).waitFor();
      await remove.getByLabel('Your email, to confirm').fill(USER.email);
      await remove.getByLabel('Current password').fill(NEW_PASSWORD);
      await remove.getByLabel('Two-factor code').fill(codes[1]!);
      await remove.getByRole('button', { name: 'Delete my account' }).click();
      await page.getByRole('heading', { name: 'Sign in' }).waitFor();
      const gone = await api('/api/auth/login', {
        method: 'POST',
        body: { email: USER.email, password: NEW_PASSWORD },
      });
      assert.equal(gone.status, 401);
      session.assertNoErrors();
    } finally {
      await session.close();
    }
  });

  test('the notification log shows one row per event, its attempts under it', async () => {
    // A real receiver that refuses the first delivery of each event and takes the retry.
    const seen = new Set<string>();
    const receiver = http.createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        const { kind } = JSON.parse(body) as { kind: string };
        const first = !seen.has(kind);
        seen.add(kind);
        res.writeHead(first ? 503 : 200).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const owner = { email: 'notifications@example.com', password: 'correct horse battery', name: 'Notes' };
    const session = await newSession(browser, consoleProcess.url);
    const { page } = session;
    try {
      const cookie = cookieOf(await api('/api/auth/register', { method: 'POST', body: owner }));
      const product = await api('/api/products', { method: 'POST', cookie, body: { catalog_id: 1 } });
      const productId = ((await product.json()) as { data: { product: { id: number } } }).data.product.id;
      assert.equal((await api('/api/account/webhook', { method: 'PUT', cookie, body: { url: hookUrl } })).status, 200);
      const ticket = await api('/api/tickets', {
        method: 'POST',
        cookie,
        body: { product_id: productId, subject: 'Disk', message: 'The disk is full' },
      });
      const ticketId = ((await ticket.json()) as { data: { ticket: { id: number } } }).data.ticket.id;
      await api(`/api/tickets/${ticketId}/close`, { method: 'POST', cookie, body: {} });
      // Each event: refused once, delivered on the retry (the first retry comes 10 s later).
      await eventually(
        'both events delivered after a retry',
        async () => {
          const res = await api('/api/account/webhook', { cookie });
          const { deliveries } = ((await res.json()) as { data: { deliveries: { status: string }[] } }).data;
          return deliveries.length === 4 && deliveries.every((d) => d.status === 'delivered') ? true : undefined;
        },
        60_000,
      );

      await page.goto('/dashboard/sign-in');
      await page.getByLabel('Email').fill(owner.email);
      await page.getByLabel('Password').fill(owner.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { name: 'Fleet' }).waitFor();
      await page.goto('/dashboard/settings/notifications');
      const log = page.getByRole('table', { name: 'Webhook deliveries' });
      await log.getByText('Ticket opened').waitFor();
      assert.equal(await log.locator('tbody > tr').count(), 2, 'one row per event, not one per attempt');
      const opened = log.locator('tbody > tr', { hasText: 'Ticket opened' });
      await opened.getByText('2 attempts').click();
      const attempts = opened.getByRole('list', { name: 'Attempts for Ticket opened' }).getByRole('listitem');
      assert.equal(await attempts.count(), 2);
      assert.match((await attempts.nth(0).textContent()) ?? '', /HTTP 503 in \d+ ms/);
      assert.match((await attempts.nth(1).textContent()) ?? '', /HTTP 200 in \d+ ms/);
      await log.locator('tbody > tr', { hasText: 'Ticket closed' }).getByText('Delivered').waitFor();
      await screenshot(page, 'settings-notifications');
      session.assertNoErrors();
    } finally {
      await session.close();
      receiver.close();
    }
  });
});
