import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  assertAccessible,
  browserSkipReason,
  inSession,
  launchBrowser,
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
const USER = { name: 'Theo Themes', email: 'themes@example.com', password: 'correct horse battery' };
const VIEWPORT = { width: 1280, height: 800 };
/** The page background of each theme: --bg in packages/web/src/styles.css. */
const BACKGROUND = { light: 'rgb(245, 246, 248)', dark: 'rgb(11, 17, 32)' };
/** --chart-cpu of each theme. */
const CHART_CPU = { light: 'rgb(37, 99, 235)', dark: 'rgb(96, 165, 250)' };

/**
 * Themes and accessibility (docs/dashboard.md, "Themes"): the main pages meet WCAG 2 A/AA by
 * axe-core in the light theme, in the dark theme the system asks for, and in the one chosen with the
 * header's toggle, which a reload keeps. A real console and a real agent, so every page shows content.
 */
describe('themes and WCAG AA in the browser', { skip: skip ?? false }, () => {
  const data = tempDir('palisade-web-themes-');
  let consoleProcess: ConsoleProcess;
  let agent: AgentProcess;
  let browser: Browser;
  let serverId = 0;
  let ticketId = 0;

  before(async () => {
    consoleProcess = await startConsoleProcess({
      PALISADE_DATA_DIR: data.path,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
    });
    agent = await startAgent({
      'checkin.interval_s': '5',
      'metrics.interval_s': '1',
      'bench.max_seconds': '20',
      'bench.max_disk_mb': '64',
    });
    const cookie = await registerWithProduct(consoleProcess.url, USER, 2);
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${consoleProcess.url}${path}`, {
        method,
        headers: { cookie, origin: consoleProcess.url, ...(body ? { 'content-type': 'application/json' } : {}) },
        ...(body ? { body: JSON.stringify(body) } : {}),
      });
      // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
      return { status: res.status, body: (await res.json()) as any };
    };
    const products = await api('GET', '/api/products');
    const productId = products.body.data.products[0].id as number;
    const added = await api('POST', '/api/servers', {
      product_id: productId,
      name: 'web-1',
      api_url: agent.url,
      api_key: agent.key,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    serverId = added.body.data.server.id;
    await eventually('web-1 to check in', async () => {
      const res = await api('GET', `/api/servers/${serverId}`);
      return res.body.data.server.state === 'online' ? true : undefined;
    });
    const ticket = await api('POST', '/api/tickets', {
      product_id: productId,
      subject: 'Disk fills up at night',
      message: 'The backup job seems to leave its archives behind.',
    });
    assert.equal(ticket.status, 201, JSON.stringify(ticket.body));
    ticketId = ticket.body.data.ticket.id;
    // Tags (chips on the fleet and server pages) and a token (a row in its table) to be seen in both themes.
    assert.equal((await api('PATCH', `/api/servers/${serverId}`, { tags: ['web', 'prod'] })).status, 200);
    assert.equal((await api('POST', '/api/tokens', { name: 'deploy' })).status, 201);
    // A finished benchmark: scores, verification checks and the log on the benchmarks tab.
    assert.equal((await api('POST', `/api/servers/${serverId}/benchmarks`, { label: 'baseline' })).status, 201);
    const run = await eventually(
      'the benchmark to finish',
      async () => {
        const latest = (await api('GET', `/api/servers/${serverId}/benchmarks`)).body.data.runs[0];
        return latest?.status === 'done' || latest?.status === 'failed' ? latest : undefined;
      },
      120_000,
    );
    assert.equal(run.status, 'done', run.error);
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await agent?.stop();
    await consoleProcess?.kill();
    data.remove();
  });

  /** The signed-in pages checked, each with what shows once it has loaded. */
  const pages = () => [
    { path: '/dashboard', ready: (p: Page) => p.getByRole('link', { name: 'web-1' }) },
    { path: `/dashboard/servers/${serverId}`, ready: (p: Page) => p.getByTestId('live-metrics') },
    { path: `/dashboard/servers/${serverId}/history`, ready: (p: Page) => p.getByRole('heading', { name: 'History' }) },
    ...['lists', 'detection', 'geo', 'feeds', 'patterns', 'schedule'].map((section) => ({
      path: `/dashboard/servers/${serverId}/protection/${section}`,
      ready: (p: Page) => p.getByRole('navigation', { name: 'Protection sections' }),
    })),
    { path: `/dashboard/servers/${serverId}/attacks`, ready: (p: Page) => p.getByRole('heading', { name: 'Attacks' }) },
    {
      path: `/dashboard/servers/${serverId}/benchmarks`,
      ready: (p: Page) => p.locator('.run').filter({ hasText: 'baseline' }).getByText('Done', { exact: true }),
    },
    {
      path: `/dashboard/servers/${serverId}/settings`,
      ready: (p: Page) => p.getByRole('heading', { name: 'Remove server' }),
    },
    { path: '/dashboard/servers/add', ready: (p: Page) => p.getByRole('button', { name: 'Test connection' }) },
    { path: '/dashboard/tickets', ready: (p: Page) => p.getByRole('link', { name: 'Disk fills up at night' }) },
    { path: `/dashboard/tickets/${ticketId}`, ready: (p: Page) => p.getByText(/leave its archives behind/) },
    { path: '/dashboard/tickets/new', ready: (p: Page) => p.getByLabel('Subject') },
    ...['account', 'api', 'security', 'notifications', 'alerts', 'billing'].map((tab) => ({
      path: `/dashboard/settings/${tab}`,
      ready: (p: Page) => p.getByRole('heading', { level: 1 }),
    })),
  ];

  /** Opens a page, waits for its content and for every loading state to end. */
  async function open(page: Page, path: string, ready: (p: Page) => ReturnType<Page['locator']>) {
    await page.goto(path);
    try {
      await ready(page).waitFor();
      await page.waitForFunction(() => document.querySelector('.state-loading, [aria-busy="true"]') === null);
    } catch (err) {
      throw new Error(`${path} did not finish loading: ${(err as Error).message}`, { cause: err });
    }
  }

  const shown = (page: Page) =>
    page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor) as Promise<string>;

  /** Every page of `pages()` in the theme shown now; fails at the end, listing every page's violations. */
  async function checkEveryPage(page: Page, theme: 'light' | 'dark') {
    const failures: string[] = [];
    for (const { path, ready } of pages()) {
      await open(page, path, ready);
      assert.equal(await shown(page), BACKGROUND[theme], `${path} shows the ${theme} theme`);
      await assertAccessible(page, `${path} (${theme})`).catch((err: Error) => failures.push(err.message));
    }
    if (failures.length > 0) throw new Error(failures.join('\n\n'));
  }

  for (const theme of ['light', 'dark'] as const) {
    test(`every main page meets WCAG AA with the system asking for ${theme}`, async () => {
      await inSession(browser, consoleProcess.url, VIEWPORT, async (page) => {
        await page.emulateMedia({ colorScheme: theme });
        await page.goto('/dashboard/sign-in');
        await page.getByRole('button', { name: 'Sign in' }).waitFor();
        assert.equal(await shown(page), BACKGROUND[theme]);
        await assertAccessible(page, `sign-in (${theme})`);
        await signInThroughPage(page, USER);
        assert.equal(await page.getByLabel('Theme').inputValue(), 'system', 'nothing chosen yet: the system decides');
        await checkEveryPage(page, theme);
        await open(page, '/dashboard', (p) => p.getByRole('link', { name: 'web-1' }));
        await screenshot(page, `fleet-${theme}`);
      });
    });
  }

  test('375 px wide in dark: the header keeps the toggle, the pages meet WCAG AA and do not scroll sideways', async () => {
    await inSession(browser, consoleProcess.url, { width: 375, height: 800 }, async (page) => {
      await page.emulateMedia({ colorScheme: 'dark' });
      await signInThroughPage(page, USER);
      await page.getByLabel('Theme').waitFor();
      for (const { path, ready } of pages().slice(0, 3)) {
        await open(page, path, ready);
        await assertAccessible(page, `${path} at 375 px (dark)`);
        const wide = await page.evaluate(() => document.documentElement.scrollWidth);
        assert.ok(wide <= 375, `${path} is ${wide} px wide at 375 px`);
      }
      await page.getByRole('button', { name: 'Menu' }).click();
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Tickets' }).waitFor();
      await assertAccessible(page, 'the open menu at 375 px (dark)');
      // Escape closes it and gives the focus back to its button.
      await page.keyboard.press('Escape');
      const toggle = page.getByRole('button', { name: 'Menu' });
      assert.equal(await toggle.getAttribute('aria-expanded'), 'false');
      assert.equal(await toggle.evaluate((el) => el === document.activeElement), true);
    });
  });

  test('the toggle overrides the system, survives a reload, and System hands back to it', async () => {
    await inSession(browser, consoleProcess.url, VIEWPORT, async (page) => {
      await page.emulateMedia({ colorScheme: 'light' });
      await page.goto('/dashboard/sign-in');
      const picker = page.getByLabel('Theme');
      await picker.selectOption('dark');
      assert.equal(await shown(page), BACKGROUND.dark, 'the choice applies at once');
      await assertAccessible(page, 'sign-in (dark by the toggle)');
      await signInThroughPage(page, USER);
      // Each page is a fresh load: the remembered choice is applied before the first render.
      await checkEveryPage(page, 'dark');

      // States that only show after an action: a run's checks and log unfolded, a field's error, then a
      // new token's one-time secret box.
      const run = page.locator('.run').filter({ hasText: 'baseline' });
      await open(page, `/dashboard/servers/${serverId}/benchmarks`, () => run.getByText('Done', { exact: true }));
      await run.getByText('Verification checks').click();
      await run.getByText('Log', { exact: true }).click();
      await run.locator('.log').waitFor();
      await assertAccessible(page, 'a benchmark run with its checks and log (dark)');
      await open(page, '/dashboard/settings/api', (p) => p.getByRole('button', { name: 'Create token' }));
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.locator('.field-error').first().waitFor();
      await assertAccessible(page, 'token form with an error (dark)');
      await page.getByLabel('Name').fill('ci');
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.getByTestId('secret-value').waitFor();
      await assertAccessible(page, 'a new token shown once (dark)');

      // Charts draw on a canvas, which cannot read CSS variables: the CPU line is the theme's --chart-cpu
      // resolved when drawing (its legend marker shows the same colour), and drawn again on a change.
      await open(page, `/dashboard/servers/${serverId}`, (p) => p.getByTestId('live-metrics'));
      await page.reload();
      await page.getByTestId('live-metrics').waitFor();
      assert.equal(await picker.inputValue(), 'dark', 'the reload kept the choice');
      assert.equal(await shown(page), BACKGROUND.dark);
      const cpuMarker = page.locator('.u-legend .u-series').nth(1).locator('.u-marker');
      const cpuColour = () => cpuMarker.evaluate((el) => getComputedStyle(el).borderColor);
      assert.equal(await cpuColour(), CHART_CPU.dark);

      // The system now asks for dark, the choice says light: the choice wins, on every page.
      await page.emulateMedia({ colorScheme: 'dark' });
      await picker.selectOption('light');
      assert.equal(await shown(page), BACKGROUND.light);
      await eventually('the chart to redraw in light colours', async () =>
        (await cpuColour()) === CHART_CPU.light ? true : undefined,
      );
      await page.reload();
      await page.getByTestId('live-metrics').waitFor();
      assert.equal(await shown(page), BACKGROUND.light, 'a light choice holds against a dark system');
      await checkEveryPage(page, 'light');

      // System: the choice is forgotten and the system's dark returns.
      await picker.selectOption('system');
      assert.equal(await shown(page), BACKGROUND.dark);
      await page.reload();
      await page.getByLabel('Theme').waitFor();
      assert.equal(await shown(page), BACKGROUND.dark);
      assert.equal(await picker.inputValue(), 'system');
      assert.equal(await page.evaluate(() => window.localStorage.getItem('palisade.theme')), null);
    });
  });
});
