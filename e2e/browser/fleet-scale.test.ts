import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  browserSkipReason,
  consoleWithBrowser,
  registerWithProduct,
  screenshot,
  signInThroughPage,
} from '../support/browser.js';
import { insertServers } from '../support/fleet-seed.js';
import { eventually } from '../support/processes.js';

const skip = browserSkipReason();
const USER = { email: 'fleet-scale@example.com', password: 'correct horse battery' };
/** Names by position: a quarter each, so a filter's expected count is known. */
const FAMILIES = ['worker-eu-west', 'web-eu-west', 'worker-us-east', 'db-eu-west'];

/**
 * A fleet written into the console's database (e2e/support/fleet-seed.ts), then brought to life
 * through the check-in protocol: most servers check in (a few hot, a few under attack), the last
 * tenth never does. Answers the server names, in id order.
 */
async function seedFleet(url: string, dataDir: string, count: number): Promise<{ names: string[]; cookie: string }> {
  const cookie = await registerWithProduct(url, { ...USER, name: 'Fleet Scale' });
  const names = Array.from({ length: count }, (_, i) => `${FAMILIES[i % 4]}-${String(i).padStart(4, '0')}`);
  const daemons = (
    await insertServers(
      url,
      dataDir,
      cookie,
      names.map((name, i) => ({ name, tags: [FAMILIES[i % 4]!.split('-')[0]!], apiUrl: 'http://192.0.2.1:9740' })),
    )
  ).map((s) => s.daemon);
  const now = Date.now();
  const checkin = async (i: number) => {
    // Server 5: CPU 98.9 %; 6: memory 96 %; 7: disk 97.5 %; 9: under attack; the last tenth never checks in.
    if (i >= count - Math.ceil(count / 10)) return;
    const res = await fetch(`${url}/api/agent/checkin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${daemons[i]}` },
      body: JSON.stringify({
        agent_version: '0.1.0',
        hostname: names[i],
        facts: { cores: 4 },
        sample: {
          ts: now,
          cpu_pct: i === 5 ? 98.9 : 10 + (i % 50),
          mem_used_mb: i === 6 ? 7864 : 2048,
          mem_total_mb: 8192,
          disk_used_pct: i === 7 ? 97.5 : 40 + (i % 30),
          load1: 0.4,
          rx_bps: 125_000,
          tx_bps: 10_000,
          ...(i === 9 ? { attacks_active: 1, attacks_total: 1 } : {}),
        },
      }),
    });
    if (res.status !== 200) throw new Error(`check-in ${i}: ${res.status} ${await res.text()}`);
  };
  for (let i = 0; i < count; i += 20)
    await Promise.all(Array.from({ length: 20 }, (_, k) => i + k < count && checkin(i + k)));
  return { names, cookie };
}

/** How long one timed action may take before the test says what the page shows instead of waiting on. */
const TIMED_LIMIT_MS = 60_000;

/**
 * Milliseconds from `act` until `done` holds, measured in the page (to the next frame after it
 * holds). Checked at each frame and, should frames stop coming (a page the browser throttles), every
 * 100 ms; past TIMED_LIMIT_MS it fails naming the action and what the caption and status say.
 */
async function timed(page: Page, act: string, done: string): Promise<number> {
  return page.evaluate(
    async ({ act, done, limit }) => {
      const holds = new Function(`return (${done});`) as () => boolean;
      const start = performance.now();
      new Function(act)();
      await new Promise<void>((resolve, reject) => {
        let settled = false;
        const settle = (end: () => void) => {
          settled = true;
          clearInterval(timer);
          end();
        };
        const check = () => {
          if (settled) return;
          if (holds())
            settle(() => {
              // The next frame after it holds, or 100 ms when frames do not come.
              requestAnimationFrame(() => resolve());
              setTimeout(resolve, 100);
            });
          else if (performance.now() - start > limit) {
            const text = (selector: string) => document.querySelector(selector)?.textContent ?? '(none)';
            const box = (document.querySelector('#fleet-filter') as HTMLInputElement | null)?.value;
            settle(() =>
              reject(
                new Error(
                  `${act.trim()} → waited ${limit} ms for ${done}; caption: ${text('table.fleet caption')}; ` +
                    `status: ${text('form[aria-label="Filter servers"] [role=status]')}; filter box: ${box}; ` +
                    `address: ${location.search}`,
                ),
              ),
            );
          }
        };
        const frame = () => {
          check();
          if (!settled) requestAnimationFrame(frame);
        };
        const timer = setInterval(check, 100);
        frame();
      });
      return Math.round(performance.now() - start);
    },
    { act, done, limit: TIMED_LIMIT_MS },
  );
}

/** Types into the filter the way React sees a keystroke, for the timing. */
const typeInFilter = (text: string) => `
  const input = document.querySelector('#fleet-filter');
  Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(input, ${JSON.stringify(text)});
  input.dispatchEvent(new Event('input', { bubbles: true }));`;
const statusSays = (text: string) =>
  `document.querySelector('form[aria-label="Filter servers"] [role=status]')?.textContent === ${JSON.stringify(text)}`;
const clickSort = (column: string) =>
  `[...document.querySelectorAll('table.fleet th a.sort')].find((a) => a.textContent.startsWith(${JSON.stringify(column)})).click()`;
const sortedBy = (name: string) =>
  `(document.querySelector('table.fleet caption')?.textContent ?? '').includes('sorted by ${name}')`;

/** Rounds of each timing: the figure is the median (one round can meet a garbage collection or a timer). */
const TIMING_ROUNDS = 5;

/**
 * Sort and filter timings at this fleet size, printed as each action's median and slowest of
 * TIMING_ROUNDS (the bars: under 100 ms at 200, 300 ms at 2,000; docs/dashboard.md, "Fleet").
 */
async function measure(page: Page, count: number) {
  const worker = count / 4;
  const rounds: Record<'sort_cpu_ms' | 'sort_name_ms' | 'filter_ms' | 'clear_ms', number[]> = {
    sort_cpu_ms: [],
    sort_name_ms: [],
    filter_ms: [],
    clear_ms: [],
  };
  for (let i = 0; i < TIMING_ROUNDS; i++) {
    rounds.sort_cpu_ms.push(await timed(page, clickSort('CPU'), sortedBy('CPU')));
    rounds.sort_name_ms.push(await timed(page, clickSort('Server'), sortedBy('name')));
    rounds.filter_ms.push(
      await timed(page, typeInFilter('worker-eu-west'), statusSays(`${worker} of ${count} servers`)),
    );
    rounds.clear_ms.push(await timed(page, typeInFilter(''), statusSays(`${count} of ${count} servers`)));
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const figures = Object.fromEntries(
    Object.entries(rounds).map(([k, xs]) => [k, { median: median(xs), slowest: Math.max(...xs) }]),
  );
  console.log(`fleet table at ${count} servers (median and slowest of ${TIMING_ROUNDS}): ${JSON.stringify(figures)}`);
  return Object.values(rounds).flat();
}

describe('the fleet table at 200 servers', { skip: skip ?? false }, () => {
  let names: string[] = [];
  let cookie = '';
  const suite = consoleWithBrowser('palisade-web-scale-', {}, async (url, dir) => {
    ({ names, cookie } = await seedFleet(url, dir, 200));
  });

  test('typing into the filter loses no keystroke at 0, 30 or 150 ms a key; the address follows', async () => {
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.getByText('200 of 200 servers').waitFor();
      const box = page.getByLabel('Filter', { exact: true });
      for (const delay of [0, 30, 150]) {
        await box.pressSequentially('worker-eu-west', { delay });
        assert.equal(await box.inputValue(), 'worker-eu-west', `typed at ${delay} ms a key`);
        await page.waitForURL((u) => u.searchParams.get('q') === 'worker-eu-west');
        await page.getByText('50 of 200 servers').waitFor();
        assert.equal(await box.inputValue(), 'worker-eu-west', `still whole once the address follows (${delay} ms)`);
        await box.fill('');
        await page.waitForURL((u) => !u.searchParams.has('q'));
        await page.getByText('200 of 200 servers').waitFor();
      }
      // The address drives the box too: back to a filtered view.
      await page.goto('/dashboard?q=db-eu');
      await page.getByText('50 of 200 servers').waitFor();
      assert.equal(await box.inputValue(), 'db-eu');
    });
  });

  test('needs attention first by default; figures past their limit are marked; score sorts worst first', async () => {
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.getByText('200 of 200 servers').waitFor();
      const rows = page.locator('table.fleet tbody tr');
      assert.match((await page.locator('table.fleet caption').textContent()) ?? '', /needs attention first/);
      const first = await rows.first().textContent();
      assert.match(first ?? '', new RegExp(names[9]!), 'the server under attack leads');
      // Then the offline ones (never checked in) and the hot ones, before any server that is fine.
      const order = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-attention')));
      const rank = ['under attack', 'unreachable', 'offline', 'hot', 'late', 'fine'];
      for (let i = 1; i < order.length; i++)
        assert.ok(rank.indexOf(order[i]!) >= rank.indexOf(order[i - 1]!), `row ${i}: ${order[i - 1]} then ${order[i]}`);
      for (const [i, label] of [
        [5, 'CPU'],
        [6, 'Memory'],
        [7, 'Disk'],
      ] as const) {
        const row = rows.filter({ hasText: names[i]! });
        const cell = row.locator(`td[data-label="${label}"] .heat-hot`);
        assert.equal(await cell.count(), 1, `${names[i]}: ${label} is marked hot`);
        assert.match((await cell.textContent()) ?? '', /past the 90 % limit/);
        assert.equal(await row.getAttribute('data-attention'), 'hot');
      }
      // Never checked in: no score in a band's colour, but a dash that says so.
      const silent = rows.filter({ hasText: names[199]! });
      assert.match((await silent.locator('td[data-label="Score"]').textContent()) ?? '', /—\s*no check-in yet/);
      await page.getByRole('link', { name: 'Score' }).click();
      await page.waitForURL(/sort=score/);
      assert.equal(new URL(page.url()).searchParams.get('dir'), null, 'score sorts lowest first');
      // The address changes first; the table follows at React's pace (a deferred render), so the
      // order is read until the sort has been drawn.
      let scores: number[] = [];
      await eventually(
        'the rows drawn lowest score first',
        async () => {
          scores = await rows.evaluateAll((trs) =>
            trs.map((tr) => Number(tr.querySelector('td[data-label="Score"]')?.textContent?.match(/\d+/)?.[0] ?? -1)),
          );
          return scores.every((s, i) => i === 0 || s >= scores[i - 1]!) ? true : undefined;
        },
        10_000,
      ).catch(() => assert.fail(`not lowest score first: ${JSON.stringify(scores.slice(0, 10))}`));

      // Bytes over the wire for a cold load of the fleet page (the bundle, the style, the fleet and its
      // trends), against the same files and answers decoded: what the page cost before compression.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
      let wire = 0;
      let decoded = 0;
      cdp.on('Network.dataReceived', (e) => {
        decoded += e.dataLength;
      });
      cdp.on('Network.loadingFinished', (e) => {
        wire += e.encodedDataLength;
      });
      await page.reload();
      await page.getByText('200 of 200 servers').waitFor();
      await page.waitForLoadState('networkidle');
      console.log(`cold fleet load at 200 servers: ${wire} B over the wire, ${decoded} B decoded`);
      assert.ok(wire < decoded / 2, `compressed: ${wire} B for ${decoded} B`);
      await cdp.detach();

      await page.getByRole('link', { name: 'Needs attention first' }).click();
      await page.waitForURL((u) => !u.searchParams.has('sort'));
      await measure(page, 200);
    });
  });

  test('Protection, fleet lookup: the action first, counts per state, the servers filtered and paged', async () => {
    const entry = await fetch(`${suite.url}/api/fleet/entries`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ list: 'black', ip: '203.0.113.99', reason: 'scanner', scope: 'all' }),
    });
    assert.equal(entry.status, 201, await entry.text());
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/protection');
      const box = page.getByRole('region', { name: 'Which servers block this address?' });
      await box.getByLabel('IP address').fill('203.0.113.99');
      await box.getByRole('button', { name: 'Look up' }).click();
      const table = box.getByRole('table', { name: /^Servers for fleet entry \d+$/ });
      await table.waitFor();
      const lift = box.getByRole('button', { name: 'Lift everywhere' });
      assert.ok((await lift.boundingBox())!.y < (await table.boundingBox())!.y, 'the action comes before the list');
      const chips = box.getByRole('group', { name: /by state$/ }).getByRole('button');
      const counts = Object.fromEntries(
        (await chips.allTextContents()).map((t) => {
          const [, word, n] = /^(\w+)\s*(\d+)$/.exec(t.trim())!;
          return [word!, Number(n)];
        }),
      );
      assert.equal(counts.All, 200, JSON.stringify(counts));
      assert.equal(
        Object.entries(counts)
          .filter(([w]) => w !== 'All')
          .reduce((sum, [, n]) => sum + n, 0),
        200,
        `the states add up: ${JSON.stringify(counts)}`,
      );
      assert.equal(await table.locator('tbody tr').count(), 25, 'one page of 25');
      await box
        .getByRole('navigation', { name: /^Pages of fleet entry/ })
        .getByText(/^Page 1 of 8/)
        .waitFor();
      // One state: only its servers.
      const [word, n] = Object.entries(counts).find(([w]) => w !== 'All')!;
      await chips.filter({ hasText: word }).click();
      const states = await table.locator('tbody tr td:nth-child(2)').allTextContents();
      assert.equal(states.length, Math.min(25, n));
      await box.getByLabel('Server name').fill(names[4]!);
      assert.ok((await table.locator('tbody tr').count()) <= 1);
      await screenshot(page, 'fleet-lookup-200');
    });
  });

  test('Settings, alerts: servers found by typing, maintenance paged, the history first', async () => {
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/settings/alerts');
      const headings = page.locator('main h2');
      await headings.first().waitFor();
      assert.equal(await headings.first().textContent(), 'Alert history', 'the history comes first');
      const form = page.getByRole('form', { name: 'Add an alert rule' });
      const servers = form.getByRole('group', { name: /^Servers/ });
      // The group is drawn before the servers are read: count once the list says how many it leaves out.
      await servers.getByText('188 more servers match').waitFor();
      assert.equal(await servers.getByRole('checkbox').count(), 12, 'twelve of 200 at once, not 200');
      await servers.getByLabel('Find servers').fill(names[4]!);
      await servers.getByLabel(names[4]!).check();
      await servers.getByLabel('Find servers').fill('');
      // The chosen one stays, first and ticked, whatever the search shows.
      assert.equal(await servers.getByRole('checkbox').first().isChecked(), true);
      assert.equal(await servers.getByRole('checkbox', { checked: true }).count(), 1);
      const maintenance = page.getByRole('table', { name: 'Maintenance' });
      const pages = page.getByRole('navigation', { name: 'Pages of maintenance' });
      await pages.getByText(/^Page 1 of 8/).waitFor();
      assert.equal(await maintenance.locator('tbody tr').count(), 25);
      await page.getByLabel('Find a server').fill(names[7]!);
      // One match is one page, so the pager goes; the row count is read once the search has been drawn.
      await eventually('the search drawn', async () => ((await pages.count()) === 0 ? true : undefined), 10_000);
      assert.equal(await maintenance.locator('tbody tr').count(), 1);
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      console.log(`alerts settings at 200 servers: ${height} px tall at 1280x800`);
      assert.ok(height < 5000, `the page is ${height} px tall`);
      await screenshot(page, 'settings-alerts-200');
    });
  });

  test('screenshots at 1280 and 375 px, light and dark: nothing is cut or pushed off', async () => {
    for (const [width, height] of [
      [1280, 800],
      [375, 812],
    ] as const) {
      for (const theme of ['light', 'dark'] as const) {
        await suite.run(
          async (page) => {
            await page.emulateMedia({ colorScheme: theme });
            await signInThroughPage(page, USER);
            await page.getByText('200 of 200 servers').waitFor();
            // The table fits its card: no column is cut at 1280 px, and the page never scrolls sideways.
            const overflow = await page.evaluate(() => {
              const table = document.querySelector('table.fleet')!.getBoundingClientRect();
              const card = document.querySelector('.table-scroll')!.getBoundingClientRect();
              return { table: table.width, card: card.width, page: document.documentElement.scrollWidth };
            });
            assert.ok(overflow.page <= width, `the page scrolls sideways at ${width} px: ${JSON.stringify(overflow)}`);
            if (width > 400) assert.ok(overflow.table <= overflow.card + 1, JSON.stringify(overflow));
            await screenshot(page, `fleet-200-${width}-${theme}`);
          },
          { width, height },
        );
      }
    }
  });
});

describe('the fleet table at 2,000 servers', { skip: skip ?? false }, () => {
  const suite = consoleWithBrowser('palisade-web-scale2k-', {}, async (url, dir) => {
    await seedFleet(url, dir, 2000);
  });

  test('sort and filter timings, printed', async () => {
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.getByText('2000 of 2000 servers', { exact: false }).waitFor({ timeout: 60_000 });
      const figures = await measure(page, 2000);
      // Every action ended in the table it asked for (the timings themselves are reported, not asserted).
      assert.ok(Object.values(figures).every((ms) => ms >= 0));
    });
  });
});
