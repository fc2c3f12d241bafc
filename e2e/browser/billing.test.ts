import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  browserSkipReason,
  inSession,
  launchBrowser,
  registerWithProduct,
  screenshot,
  signInThroughPage,
} from '../support/browser.js';
import { type ConsoleProcess, startConsoleProcess, tempDir } from '../support/processes.js';

const skip = browserSkipReason();
const USER = { email: 'billing@example.com', password: 'correct horse battery', name: 'Billing' };

/**
 * Billing that tells the truth and lists that page, in the browser (docs/dashboard.md, "Products and
 * billing", "Tickets"): a paid plan asks first and says no payment is taken; a product is removed
 * only when nothing uses it; the free plan is one at a time; the tickets list loads more and says
 * how many of how many it shows.
 */
describe('billing and paged lists in the browser', { skip: skip ?? false }, () => {
  const data = tempDir('palisade-web-billing-');
  let consoleProcess: ConsoleProcess;
  let browser: Browser;
  let cookie = '';

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${consoleProcess.url}${path}`, {
      method,
      headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as { data?: Record<string, unknown>; error?: string } };
  };

  before(async () => {
    consoleProcess = await startConsoleProcess({ PALISADE_DATA_DIR: data.path, PALISADE_BOOTSTRAP_ADMIN: '0' });
    // Registered with the free plan already (product 1 of the catalog, Starter).
    cookie = await registerWithProduct(consoleProcess.url, USER);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await consoleProcess?.kill();
    data.remove();
  });

  test('a paid plan asks first; a product in use is not removed; the free plan is one at a time', async () => {
    await inSession(browser, consoleProcess.url, { width: 1280, height: 900 }, async (page) => {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/settings/billing');
      const products = page.getByRole('table', { name: 'Your products' });
      await products.getByText('Starter').waitFor();

      // The free plan is held: its card says so and its button is off; the console says the same.
      await page.getByText('You have Starter already: one free plan per account at a time.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Add Starter' }).isDisabled(), true);
      const second = await api('POST', '/api/products', { catalog_id: 1 });
      assert.equal(second.status, 409);
      assert.match(second.body.error!, /^catalog_id: one free plan per account at a time/);

      // A paid plan asks, says no payment is taken, and Cancel adds nothing.
      await page.getByRole('button', { name: 'Add Pro' }).click();
      const dialog = page.getByRole('dialog', { name: 'Add Pro for $19.00 / month?' });
      await dialog.waitFor();
      await dialog.getByText('No payment is taken in this edition of Palisade').waitFor();
      await screenshot(page, 'billing-confirm');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await dialog.waitFor({ state: 'hidden' });
      assert.equal(await products.getByText('Pro', { exact: true }).count(), 0);
      assert.equal(((await api('GET', '/api/products')).body.data!.products as unknown[]).length, 1);

      await page.getByRole('button', { name: 'Add Pro' }).click();
      await dialog.getByRole('button', { name: 'Add Pro' }).click();
      await products.getByText('Pro', { exact: true }).waitFor();
      await page.getByText('$19.00 / month', { exact: false }).first().waitFor();

      // An enrolment token that can still add servers to Pro keeps it; the page says what to do.
      const pro = ((await api('GET', '/api/products')).body.data!.products as { id: number; sku: string }[]).find(
        (p) => p.sku === 'pro',
      )!;
      const token = await api('POST', '/api/enrolment-tokens', { product_id: pro.id });
      assert.equal(token.status, 201);
      const proRow = products.locator('tbody tr').filter({ hasText: 'Pro' });
      await proRow.getByRole('button', { name: 'Remove' }).click();
      await proRow.getByRole('button', { name: 'Remove Pro' }).click();
      await page.getByText(/1 enrolment token can still add servers to Pro .*; revoke it first/).waitFor();
      await screenshot(page, 'billing-remove-refused');
      assert.equal((await api('DELETE', `/api/enrolment-tokens/${token.body.data!.id}`)).status, 200);

      await proRow.getByRole('button', { name: 'Remove' }).click();
      await proRow.getByRole('button', { name: 'Remove Pro' }).click();
      await proRow.waitFor({ state: 'detached' });

      // Starter removed, it can be taken again (one at a time, docs/decisions.md).
      const starterRow = products.locator('tbody tr').filter({ hasText: 'Starter' });
      await starterRow.getByRole('button', { name: 'Remove' }).click();
      await starterRow.getByRole('button', { name: 'Remove Starter' }).click();
      await page.getByText('No products yet.').waitFor();
      await page.getByRole('button', { name: 'Add Starter' }).click();
      await page.getByRole('table', { name: 'Your products' }).getByText('Starter').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Add Starter' }).isDisabled(), true);
    });
  });

  test('the tickets list shows 50 of how many, and loads more', async () => {
    const product = ((await api('GET', '/api/products')).body.data!.products as { id: number }[])[0]!;
    for (let i = 1; i <= 55; i += 1) {
      const res = await api('POST', '/api/tickets', { product_id: product.id, subject: `Question ${i}`, message: 'm' });
      assert.equal(res.status, 201);
    }
    await inSession(browser, consoleProcess.url, { width: 1280, height: 900 }, async (page) => {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/tickets');
      const rows = page.getByRole('table', { name: 'Tickets' }).locator('tbody tr');
      await page.getByText('50 of 55 tickets').waitFor();
      assert.equal(await rows.count(), 50);
      await rows.first().getByText('Question 55').waitFor();
      await page.getByRole('button', { name: 'Load more' }).scrollIntoViewIfNeeded();
      await screenshot(page, 'tickets-load-more');
      await page.getByRole('button', { name: 'Load more' }).click();
      await page.getByText('55 of 55 tickets').waitFor();
      assert.equal(await rows.count(), 55);
      await rows.last().getByText('Question 1', { exact: true }).waitFor();
      assert.equal(await page.getByRole('button', { name: 'Load more' }).count(), 0, 'nothing more to load');
    });
  });
});
