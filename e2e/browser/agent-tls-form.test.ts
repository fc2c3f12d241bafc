import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import {
  browserSkipReason,
  launchBrowser,
  newSession,
  registerWithProduct,
  signInThroughPage,
} from '../support/browser.js';
import {
  type AgentProcess,
  type ConsoleProcess,
  startAgent,
  startConsoleProcess,
  tempDir,
} from '../support/processes.js';

const skip = browserSkipReason();
const USER = { email: 'tls-form@example.com', password: 'correct horse battery' };

/** The add-server form asks for the TLS fingerprint when the address is https, and explains a wrong one. */
describe('adding a TLS agent in the browser', { skip: skip ?? false }, () => {
  const data = tempDir('palisade-web-tls-');
  let consoleProcess: ConsoleProcess;
  let agent: AgentProcess;
  let browser: Browser;
  let pin = '';

  before(async () => {
    consoleProcess = await startConsoleProcess({
      PALISADE_DATA_DIR: data.path,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
    });
    agent = await startAgent({ 'metrics.tls': 'on' });
    pin = /TLS certificate SHA-256 fingerprint: (\S+)/.exec(agent.output())![1]!;
    await registerWithProduct(consoleProcess.url, { ...USER, name: 'TLS Form' });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await agent?.stop();
    await consoleProcess?.kill();
    data.remove();
  });

  test('the fingerprint field appears for https, a wrong pin is explained, the right one adds the server', async () => {
    const session = await newSession(browser, consoleProcess.url);
    const { page } = session;
    try {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/servers/add');
      await page.getByRole('heading', { name: 'Add a server' }).waitFor();
      await page.getByLabel('Label').fill('tls-web');

      await page.getByLabel('Agent address').fill(agent.url.replace('https:', 'http:'));
      assert.equal(await page.getByLabel('TLS fingerprint').count(), 0, 'no fingerprint field for http');
      await page.getByLabel('Agent address').fill(agent.url);
      await page.getByLabel('TLS fingerprint').waitFor();
      await page.getByLabel('Agent key', { exact: true }).fill(agent.key);

      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.getByText('Certificate not trusted.').waitFor();
      assert.ok(await page.getByText(pin, { exact: false }).count(), 'the presented fingerprint is shown');

      await page.getByLabel('TLS fingerprint').fill('AB:CD');
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.getByText('Enter the SHA-256 fingerprint the agent prints').waitFor();

      const wrong = `${'AA:'.repeat(31)}AA`;
      await page.getByLabel('TLS fingerprint').fill(wrong);
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.getByText('Certificate mismatch.').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Add server' }).isDisabled(), true);

      await page.getByLabel('TLS fingerprint').fill(pin.toLowerCase());
      await page.getByRole('button', { name: 'Test connection' }).click();
      await page.getByText('Connected.').waitFor();
      await page.getByRole('button', { name: 'Add server' }).click();
      await page.getByRole('heading', { name: 'tls-web' }).waitFor();
      session.assertNoErrors();
    } catch (err) {
      const shot = join(tmpdir(), `palisade-e2e-tls-failure-${Date.now()}.png`);
      await page.screenshot({ path: shot }).catch(() => {});
      throw new Error(`${(err as Error).message}\nat ${page.url()}; screenshot: ${shot}`, { cause: err });
    } finally {
      await session.close();
    }
  });
});
