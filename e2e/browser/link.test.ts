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
  screenshot,
  signInThroughPage,
} from '../support/browser.js';
import {
  type AgentProcess,
  type ConsoleProcess,
  eventually,
  startAgent,
  startConsoleProcess,
  tempDir,
} from '../support/processes.js';

const skip = browserSkipReason();
const USER = { email: 'link-page@example.com', password: 'correct horse battery' };

/** The server page says how the console reaches the agent: its outbound link, up or down. */
describe('the connection on the server page', { skip: skip ?? false }, () => {
  const data = tempDir('palisade-web-link-');
  let consoleProcess: ConsoleProcess;
  let agent: AgentProcess;
  let browser: Browser;
  let serverId = 0;

  before(async () => {
    consoleProcess = await startConsoleProcess({
      PALISADE_DATA_DIR: data.path,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
    });
    agent = await startAgent({
      'checkin.interval_s': '5',
      'console.connect': 'outbound',
    });
    const cookie = await registerWithProduct(consoleProcess.url, { ...USER, name: 'Link Page' });
    const headers = { 'content-type': 'application/json', cookie };
    const products = await (await fetch(`${consoleProcess.url}/api/products`, { headers })).json();
    const added = await fetch(`${consoleProcess.url}/api/servers`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        product_id: products.data.products[0].id,
        name: 'behind-nat',
        api_url: agent.url,
        api_key: agent.key,
      }),
    });
    assert.equal(added.status, 201);
    serverId = (await added.json()).data.server.id;
    // Added with its address, the server is direct: the agent's link is refused (409) until the
    // account switches it on the server page (docs/security.md, "Links and agent keys").
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await agent?.stop();
    await consoleProcess?.kill();
    data.remove();
  });

  test('switched to outbound on the server page: the link comes up, then down once the agent stops', async () => {
    const session = await newSession(browser, consoleProcess.url);
    const { page } = session;
    try {
      await signInThroughPage(page, USER);
      await page.goto(`/dashboard/servers/${serverId}/settings`);
      await page.getByRole('heading', { name: 'behind-nat' }).waitFor();
      const connection = page.getByTestId('connection');
      await connection.getByText(/^direct connection/).waitFor();
      const mode = page.getByLabel('How the console reaches this server');
      assert.equal(await mode.inputValue(), 'direct');
      await mode.selectOption('outbound');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByText('Saved: the console now reaches the server through its link.').waitFor();
      await screenshot(page, 'server-connection');

      // The agent retries its refused link within one check-in interval (5 s here).
      await eventually('the link up on the server page', async () => {
        await page.goto(`/dashboard/servers/${serverId}`);
        await page.getByRole('heading', { name: 'behind-nat' }).waitFor();
        return /^outbound link up/.test((await connection.textContent()) ?? '') ? true : undefined;
      });
      await screenshot(page, 'server-link');

      await new Promise((resolve) => {
        agent.child.once('exit', resolve);
        agent.child.kill('SIGTERM');
      });
      await page.reload();
      await connection.getByText(/^outbound link down/).waitFor();
      assert.match((await connection.getAttribute('title')) ?? '', /reconnects by itself/);
      session.assertNoErrors();
    } catch (err) {
      const shot = join(tmpdir(), `palisade-e2e-link-failure-${Date.now()}.png`);
      await page.screenshot({ path: shot }).catch(() => {});
      throw new Error(`${(err as Error).message}\nat ${page.url()}; screenshot: ${shot}`, { cause: err });
    } finally {
      await session.close();
    }
  });
});
