import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  browserSkipReason,
  consoleWithBrowser,
  registerWithProduct,
  screenshot,
  signInThroughPage,
} from '../support/browser.js';
import { insertServers } from '../support/fleet-seed.js';

const skip = browserSkipReason();
const USER = { email: 'fleet-table@example.com', password: 'correct horse battery' };
const SERVERS = 60;
const MIN = 60_000;

/**
 * The fleet table at more than a page of servers (docs/dashboard.md, "Fleet"): figures now with a
 * last-hour sparkline that shows a silence as a gap, tags, sort, filter and page kept in the address.
 */
describe('the fleet table in the browser', { skip: skip ?? false }, () => {
  const suite = consoleWithBrowser('palisade-web-fleet-', {}, seedFleet);
  const daemons: string[] = [];
  let lastId = 0;

  const checkin = (daemon: string, body: Record<string, unknown>) =>
    fetch(`${suite.url}/api/agent/checkin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon}` },
      body: JSON.stringify({ agent_version: '0.1.0', hostname: 'node', facts: { cores: 2 }, ...body }),
    });
  const sample = (ts: number, cpu: number) => ({
    ts,
    cpu_pct: cpu,
    mem_used_mb: 2048,
    mem_total_mb: 8192,
    disk_used_pct: 61.2,
    load1: 0.4,
    rx_bps: 125_000,
    tx_bps: 0,
  });

  async function seedFleet(url: string, dataDir: string) {
    const cookie = await registerWithProduct(url, { ...USER, name: 'Fleet Table' });
    // A fleet larger than a product's limit.
    const seeded = await insertServers(
      url,
      dataDir,
      cookie,
      Array.from({ length: SERVERS }, (_, k) => ({
        name: `node-${String(k + 1).padStart(2, '0')}`,
        tags: (k + 1) % 3 === 0 ? ['db'] : ['web'],
        apiUrl: `http://10.0.0.${k + 1}:9100`,
      })),
    );
    daemons.push(...seeded.map((s) => s.daemon));
    lastId = seeded[seeded.length - 1]!.id;

    // node-03 (tagged db): busy now, with samples 50 to 30 minutes ago, then silent, then 8 minutes up to now.
    const now = Date.now();
    const past = [
      ...Array.from({ length: 11 }, (_, k) => sample(now - 50 * MIN + k * 2 * MIN, 10 + k)),
      ...Array.from({ length: 8 }, (_, k) => sample(now - 8 * MIN + k * MIN, 30)),
    ];
    assert.equal((await checkin(daemons[2]!, { sample: sample(now, 42), past_samples: past })).status, 200);
    // node-06 (tagged db): quiet.
    assert.equal((await checkin(daemons[5]!, { sample: sample(now, 3) })).status, 200);
  }

  test('pages of 50, tag filter, sort by CPU with a sparkline gap; the view survives a reload', async () => {
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      const rows = page.locator('table.fleet tbody tr');
      await page.getByText(`${SERVERS} of ${SERVERS} servers`).waitFor();
      assert.equal(await rows.count(), 50, 'the first page holds 50 servers');
      const pager = page.getByRole('navigation', { name: 'Pages' });
      await pager.getByText(/^Page 1 of 2/).waitFor();
      await page.getByRole('link', { name: 'Next →' }).click();
      await pager.getByText(/^Page 2 of 2/).waitFor();
      assert.equal(new URL(page.url()).searchParams.get('page'), '2');
      assert.equal(await rows.count(), 10);

      await page.getByLabel('Tag', { exact: true }).selectOption('db');
      await page.getByText(`20 of ${SERVERS} servers`).waitFor();
      assert.equal(new URL(page.url()).searchParams.get('page'), null, 'a new filter starts at page 1');
      assert.equal(await page.getByRole('navigation', { name: 'Pages' }).count(), 0);
      await page.getByRole('link', { name: 'CPU' }).click();
      await page.waitForURL(/sort=cpu/);
      const url = new URL(page.url());
      assert.equal(url.searchParams.get('tag'), 'db');
      assert.equal(url.searchParams.get('dir'), 'desc', 'figures sort highest first');

      const first = rows.first();
      await first.getByRole('link', { name: 'node-03' }).waitFor();
      const cpu = first.locator('td[data-label="CPU"]');
      assert.match((await cpu.textContent()) ?? '', /42\s?%/);
      assert.match((await first.locator('td[data-label="Memory"]').textContent()) ?? '', /25\s?%/);
      assert.match((await first.locator('td[data-label="Network"]').textContent()) ?? '', /1(\.0)?\s?Mbit\/s/);
      const spark = cpu.getByRole('img', { name: /^CPU over the last hour/ });
      assert.equal(await spark.getAttribute('data-runs'), '2', 'the silence is a gap, not a line across it');
      assert.match((await rows.nth(1).textContent()) ?? '', /node-06/, 'then the quiet one');
      await screenshot(page, 'fleet-table');

      await page.reload();
      await first.getByRole('link', { name: 'node-03' }).waitFor();
      await page.getByText(`20 of ${SERVERS} servers`).waitFor();
      assert.equal(
        await page.getByLabel('Tag', { exact: true }).inputValue(),
        'db',
        'the filter is kept in the address',
      );
    });
  });

  test('rename and tag a server on its page; a bad tag is named; a tag leads back to the fleet', async () => {
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.goto(`/dashboard/servers/${lastId}`);
      await page.getByRole('heading', { name: `node-${SERVERS}` }).waitFor();
      await page.getByRole('button', { name: 'Edit name and tags' }).click();
      const form = page.getByRole('form', { name: 'Name and tags' });
      await form.getByLabel('Name').fill('edge-eu-1');
      await form.getByLabel('Tags').fill('edge, Bad Tag!');
      await form.getByRole('button', { name: 'Save' }).click();
      await form.getByText(/expected 1 to 32 of a-z/).waitFor();
      await form.getByLabel('Tags').fill('Edge, eu-west');
      await form.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('heading', { name: 'edge-eu-1' }).waitFor();
      const tags = page.getByRole('list', { name: 'Tags' });
      assert.deepEqual(await tags.getByRole('link').allTextContents(), ['edge', 'eu-west']);
      await tags.getByRole('link', { name: 'edge' }).click();
      await page.getByText(`1 of ${SERVERS} servers`).waitFor();
      await page.getByRole('link', { name: 'edge-eu-1' }).waitFor();
    });
  });
});
