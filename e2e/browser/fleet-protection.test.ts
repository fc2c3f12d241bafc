import assert from 'node:assert/strict';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  assertAccessible,
  browserSkipReason,
  inSession,
  launchBrowser,
  screenshot,
  signInThroughPage,
} from '../support/browser.js';
import {
  type AgentProcess,
  type ConsoleProcess,
  eventually,
  signUp,
  startAgent,
  startConsoleProcess,
  tempDir,
} from '../support/processes.js';

/**
 * Protection → Fleet end to end (docs/protection.md, "Fleet policies"): a real console, two real
 * agents (monitor mode) and Chromium. A block pattern bans an address on the first agent; the page
 * shows, for that address, which servers block it, since when and why, and lifts it everywhere.
 */
const skip = browserSkipReason();
const USER = { name: 'Fleet Guard', email: 'fleet-guard@example.com', password: 'correct horse battery' };
const ATTACKER = '198.51.100.88';

describe('fleet protection page in a browser', { skip: skip ?? false }, () => {
  const data = tempDir('palisade-web-fleet-');
  const logFile = join(data.path, 'app.log');
  let consoleProcess: ConsoleProcess;
  let agents: AgentProcess[] = [];
  let browser: Browser;
  let cookie = '';
  const ids: number[] = [];

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${consoleProcess.url}${path}`, {
      method,
      headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
    return { status: res.status, body: (await res.json()) as any };
  };
  const holds = async (i: number) =>
    (await api('GET', `/api/servers/${ids[i]}/control?path=blacklist`)).body.entries.some(
      (e: { ip: string }) => e.ip === ATTACKER,
    );

  before(async () => {
    writeFileSync(logFile, '');
    consoleProcess = await startConsoleProcess({
      PALISADE_DATA_DIR: join(data.path, 'console'),
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
    });
    agents = await Promise.all([startAgent(), startAgent()]);
    cookie = await signUp(consoleProcess.url, USER);
    const product = (await api('POST', '/api/products', { catalog_id: 1 })).body.data.product;
    for (const [i, agent] of agents.entries()) {
      const added = await api('POST', '/api/servers', {
        product_id: product.id,
        name: `guard-${i + 1}`,
        api_url: agent.url,
        api_key: agent.key,
      });
      assert.equal(added.status, 201, JSON.stringify(added.body));
      ids.push(added.body.data.server.id);
    }
    assert.equal(
      (await api('POST', '/api/fleet/policies', { name: 'Patterns everywhere', trigger: 'pattern', scope: 'all' }))
        .status,
      201,
    );
    const pattern = await api('POST', `/api/servers/${ids[0]}/control?path=block-pattern`, {
      name: 'app-login',
      file: logFile,
      regex: 'login failed for (?<ip>\\S+)',
      threshold: 2,
      window_s: 60,
      ban_s: 600,
    });
    assert.equal(pattern.status, 200, JSON.stringify(pattern.body));
    appendFileSync(logFile, `login failed for ${ATTACKER}\nlogin failed for ${ATTACKER}\n`);
    await eventually('the ban reaches the second server', async () => ((await holds(1)) ? true : undefined));
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    for (const agent of agents) await agent.stop();
    await consoleProcess?.kill();
    data.remove();
  });

  const withPage = (body: (page: Page) => Promise<void>, width = 1280) =>
    inSession(browser, consoleProcess.url, { width, height: 900 }, async (page) => {
      await signInThroughPage(page, USER);
      await body(page);
    });

  test('an address shows which servers block it, since when and why; one action lifts it everywhere', async () => {
    await withPage(async (page) => {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Protection' }).click();
      await page.waitForURL((u) => u.pathname === '/dashboard/protection');
      await page.getByRole('heading', { name: 'Fleet protection', level: 1 }).waitFor();
      await page.getByRole('table', { name: 'Fleet policies' }).getByText('Patterns everywhere').waitFor();

      const box = page.getByRole('region', { name: 'Which servers block this address?' });
      await box.getByLabel('IP address').fill(ATTACKER);
      await box.getByRole('button', { name: 'Look up' }).click();
      const why = box.getByRole('status').filter({ hasText: ATTACKER });
      await why.waitFor();
      assert.match((await why.textContent()) ?? '', /blocked because of pattern app-login on guard-1, since /);
      const table = box.getByRole('table', { name: /^Servers for fleet entry \d+$/ });
      const rows = await table.getByRole('row').allTextContents();
      assert.equal(rows.length, 3, rows.join(' | '));
      assert.match(rows[1]!, /guard-1.*first server: its own ban/);
      assert.match(rows[2]!, /guard-2.*blocks it since /);
      await assertAccessible(page, 'the fleet protection page');
      await screenshot(page, 'fleet-protection');

      await box.getByRole('button', { name: 'Lift everywhere' }).click();
      await box.getByRole('button', { name: `Lift ${ATTACKER} on every server` }).click();
      await box.getByRole('status').filter({ hasText: 'Lifted 1 fleet entry' }).waitFor();
    });
    for (const i of [0, 1])
      await eventually(`guard-${i + 1} drops the ban`, async () => ((await holds(i)) ? undefined : true));
  });
});
