import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { browserSkipReason, inSession, launchBrowser, screenshot, signInThroughPage } from '../support/browser.js';
import {
  type AgentProcess,
  type ConsoleProcess,
  startAgent,
  startConsoleProcess,
  tempDir,
} from '../support/processes.js';

/**
 * The protection pages end to end: a real console, a real agent (monitor-only) with a blocklist
 * feed served over HTTP on loopback, and Chromium. The sub-pages have their own addresses; the
 * lookup answers from the agent's `GET /blacklist?ip=` through the console's control proxy.
 */
const skip = browserSkipReason();
const USER = { name: 'Pat Guard', email: 'protection@example.com', password: 'correct horse battery' };

/** 256 single addresses and a /24: three pages of 100. */
const FEED = ['# e2e feed', '192.0.2.0/24', ...Array.from({ length: 256 }, (_, i) => `100.64.3.${i}`)].join('\n');

describe('protection pages in a browser', { skip: skip ?? false }, () => {
  const data = tempDir('palisade-web-protection-');
  const feedServer = http.createServer((_req, res) => res.writeHead(200).end(`${FEED}\n`));
  let consoleProcess: ConsoleProcess;
  let agent: AgentProcess;
  /** An agent whose host is a fixture tree holding sshd's program and nginx's unit (`run --host-root`). */
  let servicesAgent: AgentProcess;
  let servicesBase = '';
  let browser: Browser;
  let base = '';

  before(async () => {
    await new Promise<void>((r) => feedServer.listen(0, '127.0.0.1', () => r()));
    consoleProcess = await startConsoleProcess({
      PALISADE_DATA_DIR: data.path,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
    });
    agent = await startAgent({
      // Monitor-only: the banner's case, and parallel agents never share the host's nftables table.
      'protection.backend': 'monitor',
      'autofetch.feeds': `local=http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/feed.txt`,
    });
    const api = async (path: string, body: unknown, cookie?: string) => {
      const res = await fetch(`${consoleProcess.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: consoleProcess.url, ...(cookie ? { cookie } : {}) },
        body: JSON.stringify(body),
      });
      assert.ok(res.status < 300, `${path}: ${res.status} ${await res.clone().text()}`);
      return res;
    };
    const registered = await api('/api/auth/register', USER);
    const cookie = registered.headers.get('set-cookie')!.split(';')[0]!;
    const product = await (await api('/api/products', { catalog_id: 1 }, cookie)).json();
    const server = await (
      await api(
        '/api/servers',
        { product_id: product.data.product.id, name: 'guard-1', api_url: agent.url, api_key: agent.key },
        cookie,
      )
    ).json();
    base = `/dashboard/servers/${server.data.server.id}/protection`;
    const hostRoot = join(data.path, 'host');
    mkdirSync(join(hostRoot, 'usr/sbin'), { recursive: true });
    mkdirSync(join(hostRoot, 'lib/systemd/system'), { recursive: true });
    writeFileSync(join(hostRoot, 'usr/sbin/sshd'), '', { mode: 0o755 });
    writeFileSync(join(hostRoot, 'lib/systemd/system/nginx.service'), '[Unit]\n');
    servicesAgent = await startAgent({ 'protection.backend': 'monitor' }, hostRoot);
    const second = await (
      await api(
        '/api/servers',
        {
          product_id: product.data.product.id,
          name: 'web-1',
          api_url: servicesAgent.url,
          api_key: servicesAgent.key,
        },
        cookie,
      )
    ).json();
    servicesBase = `/dashboard/servers/${second.data.server.id}/protection`;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await agent?.stop();
    await servicesAgent?.stop();
    await consoleProcess?.kill();
    await new Promise((r) => feedServer.close(r));
    data.remove();
  });

  /** A fresh signed-in page at `width` px. */
  const withPage = (body: (page: Page) => Promise<void>, width = 1280) =>
    inSession(browser, consoleProcess.url, { width, height: 900 }, async (page) => {
      await signInThroughPage(page, USER);
      await body(page);
    });

  const lookUp = async (page: Page, ip: string) => {
    const box = page.getByRole('region', { name: 'Why is this address blocked?' });
    await box.getByLabel('IP address').fill(ip);
    await box.getByRole('button', { name: 'Look up' }).click();
    const answer = box.getByRole('status', { name: `Lookup of ${ip}` });
    await answer.waitFor();
    return { box, answer };
  };

  test('each sub-page has its own address and tab; monitor-only says it blocks nothing', async () => {
    await withPage(async (page) => {
      await page.goto(base);
      await page.waitForURL((u) => u.pathname === `${base}/lists`);
      const banner = page.getByTestId('monitor-banner');
      await banner.getByText('Monitor only: detects and lists, blocks nothing.').waitFor();
      assert.match((await banner.textContent()) ?? '', /Why: protection\.backend = monitor\./);
      const tabs = page.getByRole('navigation', { name: 'Protection sections' });
      const pages: [string, string, string][] = [
        ['Detection', 'detection', 'Detection thresholds'],
        ['Geo', 'geo', 'Countries'],
        ['Feeds', 'feeds', 'Blocklist feeds'],
        ['Log patterns', 'patterns', 'Block patterns'],
        ['Schedule', 'schedule', 'Schedule'],
        ['Lists', 'lists', 'Why is this address blocked?'],
      ];
      for (const [tab, path, heading] of pages) {
        await tabs.getByRole('link', { name: tab, exact: true }).click();
        await page.waitForURL((u) => u.pathname === `${base}/${path}`);
        await page.getByRole('heading', { name: heading, exact: true }).waitFor();
        assert.equal(await tabs.getByRole('link', { name: tab, exact: true }).getAttribute('aria-current'), 'page');
        assert.equal(await page.getByTestId('monitor-banner').count(), 1, `the banner on ${path}`);
      }
      await page.goto(`${base}/detection`);
      await page
        .getByRole('table', { name: 'Detection thresholds' })
        .getByText('100 connections from one source')
        .waitFor();
      await page.goto(`${base}/nonsense`);
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    });
  });

  test('a block pattern shows the log it reads on the server and whether the agent can read it', async () => {
    const log = join(data.path, 'app.log');
    writeFileSync(log, '');
    await withPage(async (page) => {
      await page.goto(`${base}/patterns`);
      const section = page.getByRole('region', { name: 'Block patterns' });
      await section.getByText('Add a pattern').click();
      await section.getByLabel('Name').fill('app');
      await section.getByLabel('Log file').fill(log);
      await section.getByLabel('Regular expression').fill('denied for (?<ip>\\S+)');
      await section.getByRole('button', { name: 'Add pattern' }).click();
      const item = section.locator('li').filter({ hasText: /^app/ });
      await item.getByText(log).waitFor();
      assert.match((await item.textContent()) ?? '', /\(file; readable\)/);
    });
  });

  test('services found on the server are offered; one button enables their patterns and the offer goes', async () => {
    await withPage(async (page) => {
      await page.goto(`${servicesBase}/patterns`);
      const section = page.getByRole('region', { name: 'Block patterns' });
      const offer = section.getByRole('note', { name: 'Services found on this server' });
      await offer.getByText('sshd and nginx found: enable their patterns').waitFor();
      assert.match(
        (await offer.textContent()) ?? '',
        /sshd: \/usr\/sbin\/sshd → sshd; nginx: \/lib\/systemd\/system\/nginx\.service → nginx-auth, http-scan/,
      );
      assert.equal(await section.locator('li').count(), 0, 'no pattern enabled yet');
      await screenshot(page, 'protection-services');
      await offer.getByRole('button', { name: 'Enable their patterns' }).click();
      await offer.waitFor({ state: 'detached' });
      await section.getByText('Enabled sshd, nginx-auth, http-scan.').waitFor();
      const names = await section.locator('li > strong').allTextContents();
      assert.deepEqual(names.sort(), ['http-scan', 'nginx-auth', 'sshd']);
      // The custom form's source and journal, refused in the agent's words before anything is sent.
      await section.getByText('Add a pattern').click();
      await section.getByLabel('Name').fill('app');
      await section.getByLabel('Log file').fill('/var/log/app.log');
      await section.getByLabel('Regular expression').fill('denied for (?<ip>\\S+)');
      await section.getByLabel('Source').selectOption('journal');
      await section.getByRole('button', { name: 'Add pattern' }).click();
      await section.getByText('journal: expected the syslog identifiers or units to read').waitFor();
      await section.getByLabel('Journal identifiers or units').fill('app.service, app');
      await section.getByRole('button', { name: 'Add pattern' }).click();
      const item = section.locator('li').filter({ hasText: /^app/ });
      await item.getByText('journal: app.service, app', { exact: true }).waitFor();
      assert.match((await item.textContent()) ?? '', /\(the journal;/);
      await screenshot(page, 'protection-patterns-journal');
    });
  });

  test('blacklist an IP and see it in the list; the lookup names the entry', async () => {
    await withPage(async (page) => {
      await page.goto(`${base}/lists`);
      const blacklist = page.getByRole('region', { name: 'Blacklist' });
      await blacklist.getByLabel('IP or CIDR').fill('203.0.113.77');
      await blacklist.getByLabel('Note').fill('e2e');
      await blacklist.getByRole('button', { name: 'Add', exact: true }).click();
      await blacklist.getByRole('table', { name: 'Blacklist' }).getByText('203.0.113.77').waitFor();
      const { answer, box } = await lookUp(page, '203.0.113.77');
      await answer.getByText(/Blocked: on the blacklist as 203\.0\.113\.77 \(manual, "e2e"\)/).waitFor();
      await answer.getByText(/Monitor-only: this server blocks nothing/).waitFor();
      const row = box.getByRole('table', { name: 'What holds 203.0.113.77' }).getByRole('row').nth(1);
      assert.match((await row.textContent()) ?? '', /Blacklist203\.0\.113\.77manual, "e2e"Blocks/);
      await box.getByLabel('IP address').fill('010.1.1.1');
      await box.getByRole('button', { name: 'Look up' }).click();
      await box.getByText('"010.1.1.1" is not an IP address; expected one, e.g. 203.0.113.7').waitFor();
    });
  });

  test('an address on both lists is flagged, and the lookup says the whitelist wins', async () => {
    await withPage(async (page) => {
      await page.goto(`${base}/lists`);
      const whitelist = page.getByRole('region', { name: 'Whitelist' });
      await whitelist.getByLabel('IP or CIDR').fill('198.51.100.7');
      await whitelist.getByLabel('Note').fill('office');
      await whitelist.getByRole('button', { name: 'Add', exact: true }).click();
      await whitelist.getByRole('table', { name: 'Whitelist' }).getByText('198.51.100.7').waitFor();
      const blacklist = page.getByRole('region', { name: 'Blacklist' });
      await blacklist.getByLabel('IP or CIDR').fill('198.51.100.0/24');
      await blacklist.getByRole('button', { name: 'Add', exact: true }).click();
      await blacklist
        .getByRole('row')
        .filter({ hasText: '198.51.100.0/24' })
        .getByText('Also on the whitelist as 198.51.100.7: the whitelist wins, so that address is not blocked.')
        .waitFor();
      await whitelist
        .getByText('Also on the blacklist as 198.51.100.0/24: the whitelist wins, so this stays allowed.')
        .waitFor();
      assert.equal(
        await blacklist.getByRole('row').filter({ hasText: '203.0.113.77' }).getByRole('note').count(),
        0,
        'no warning on an entry only on one list',
      );
      const { answer, box } = await lookUp(page, '198.51.100.7');
      await answer.getByText(/Allowed: on the whitelist as 198\.51\.100\.7 \(manual, "office"\)/).waitFor();
      await box.getByText('On both the whitelist and the blacklist: the whitelist wins').waitFor();
      await whitelist.scrollIntoViewIfNeeded();
      await screenshot(page, 'protection-lists');
    });
  });

  test('every change made above is in the audit log, with who and what the agent answered', async () => {
    await withPage(async (page) => {
      await page.goto('/dashboard/settings/audit');
      const log = page.getByRole('table', { name: 'Audit log' });
      const added = log.getByRole('row').filter({ hasText: '198.51.100.0/24' });
      await added.waitFor();
      assert.match(
        (await added.textContent()) ?? '',
        new RegExp(`${USER.email.replace('.', '\\.')}.*blacklist set.*200 done`),
      );
      await log.getByRole('row').filter({ hasText: '"ip":"198.51.100.7","note":"office"' }).waitFor();
      assert.equal(await log.getByRole('row').filter({ hasText: 'whitelist set' }).count(), 1);
      await page.getByText(/^\d+ of \d+ entries$/).waitFor();
      await screenshot(page, 'settings-audit');
    });
  });

  test('feeds: turned on and fetched, paged through, and the lookup names the feed', async () => {
    await withPage(async (page) => {
      await page.goto(`${base}/feeds`);
      const feeds = page.getByRole('region', { name: 'Blocklist feeds' });
      await feeds.getByRole('button', { name: 'Turn feeds on' }).click();
      await feeds.getByText('Feeds turned on.').waitFor();
      await feeds.getByRole('button', { name: 'Fetch now' }).click();
      await feeds.getByText('Feeds fetched.').waitFor();
      const row = feeds.getByRole('table', { name: 'Feeds' }).getByRole('row').filter({ hasText: 'local' });
      await row.getByText('257').waitFor();
      await row.getByRole('button', { name: 'Show entries' }).click();
      const entries = page.getByRole('region', { name: 'Entries of local' });
      await entries.getByText('Entries 1–100 of 257, in address order.').waitFor();
      await entries.getByText('100.64.3.0', { exact: true }).waitFor();
      await entries.getByRole('button', { name: 'Next page' }).click();
      await entries.getByText('Entries 101–200 of 257, in address order.').waitFor();
      await entries.getByRole('button', { name: 'Next page' }).click();
      await entries.getByText('Entries 201–257 of 257, in address order.').waitFor();
      await entries.getByText('192.0.2.0/24', { exact: true }).waitFor();
      assert.equal(await entries.getByRole('button', { name: 'Next page' }).isDisabled(), true, 'the last page');
      await entries.getByRole('button', { name: 'Previous page' }).click();
      await entries.getByText('Entries 101–200 of 257, in address order.').waitFor();
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshot(page, 'protection-feeds');

      await page.getByRole('navigation', { name: 'Protection sections' }).getByRole('link', { name: 'Lists' }).click();
      const { answer, box } = await lookUp(page, '192.0.2.200');
      await answer.getByText(/Blocked: feed local lists 192\.0\.2\.0\/24\./).waitFor();
      await box
        .getByRole('table', { name: 'What holds 192.0.2.200' })
        .getByRole('cell', { name: 'local', exact: true })
        .waitFor();
      await screenshot(page, 'protection-lookup');
    });
  });

  test('on a phone, addresses stay on one line and the tables scroll', async () => {
    await withPage(async (page) => {
      await page.goto(`${base}/lists`);
      const { box } = await lookUp(page, '198.51.100.7');
      const addresses = box.locator('code.address');
      assert.ok((await addresses.count()) >= 2);
      for (const address of await addresses.all()) {
        // An inline element broken across lines has one client rectangle per line.
        const lines = await address.evaluate((el) => el.getClientRects().length);
        assert.equal(lines, 1, `${await address.textContent()} wraps`);
      }
      const scroller = box.locator('.table-scroll');
      const { scrollWidth, clientWidth } = await scroller.evaluate((el) => ({
        scrollWidth: el.scrollWidth,
        clientWidth: el.clientWidth,
      }));
      assert.ok(scrollWidth > clientWidth, 'the holders table is wider than a phone and scrolls');
      const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
      assert.ok(pageWidth <= 375, `the page itself does not scroll sideways (${pageWidth} px)`);
      await box.getByRole('table').scrollIntoViewIfNeeded();
      await screenshot(page, 'protection-mobile');
    }, 375);
  });
});
