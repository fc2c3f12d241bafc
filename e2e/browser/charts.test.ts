import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { browserSkipReason, launchBrowser, newSession, screenshot } from '../support/browser.js';
import {
  type AgentProcess,
  type ConsoleProcess,
  eventually,
  startAgent,
  startConsoleProcess,
  tempDir,
} from '../support/processes.js';

const skip = browserSkipReason();
const USER = { email: 'charts@example.com', password: 'correct horse battery' };

/** What uPlot was given and drew, read from the chart's box (components/chart.tsx keeps the instance there). */
interface Drawn {
  from: number;
  to: number;
  x: number[];
  series: (number | null)[][];
  xTicks: string[];
  yTicks: string[];
  legend: string[];
}

/** Puts the cursor on the newest point that has a value and reads the chart's data, ticks and legend. */
async function drawn(chart: Locator): Promise<Drawn> {
  return chart.evaluate((el) => {
    // biome-ignore lint/suspicious/noExplicitAny: uPlot's internals (_values) are read as the page holds them
    const u = (el as any).uplot;
    const x = u.data[0] as number[];
    const series = (u.data as (number | null)[][]).slice(1);
    let idx = x.length - 1;
    while (idx > 0 && series[0]![idx] === null) idx -= 1;
    u.setCursor({ left: u.valToPos(x[idx], 'x'), top: 10 });
    return {
      from: u.scales.x.min,
      to: u.scales.x.max,
      x,
      series,
      xTicks: u.axes[0]._values as string[],
      yTicks: u.axes[1]._values as string[],
      legend: Array.from(el.querySelectorAll('.u-legend .u-series:not(:first-child) .u-value')).map(
        (v) => v.textContent ?? '',
      ),
    };
  });
}

/** Index ranges of nulls with values on both sides: the gaps a chart leaves where nothing was measured. */
function innerGaps(values: (number | null)[]): [number, number][] {
  const gaps: [number, number][] = [];
  let start = -1;
  values.forEach((v, i) => {
    if (v === null && start < 0) start = i;
    if (v !== null && start >= 0) {
      if (values.slice(0, start).some((w) => w !== null)) gaps.push([start, i - 1]);
      start = -1;
    }
  });
  return gaps;
}

/**
 * docs/dashboard.md, "Charts" and "Units": a real agent checks in; the hour before it, with a 15-minute
 * outage, arrives as past samples; the hour's chart leaves a gap for the outage, its axes read as times
 * of day and its legend values carry units. Two benchmark runs of the server are compared side by side.
 */
describe('charts and benchmark figures in the browser', { skip: skip ?? false }, () => {
  const data = tempDir('palisade-web-charts-');
  let consoleProcess: ConsoleProcess;
  let agent: AgentProcess;
  let browser: Browser;
  let cookie = '';
  let serverId = 0;

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${consoleProcess.url}${path}`, {
      method,
      headers: { cookie, origin: consoleProcess.url, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
    return { status: res.status, body: (await res.json()) as any };
  };
  const samplesInHour = async () =>
    (await api('GET', `/api/servers/${serverId}/section?name=history&range=1h`)).body.data.samples as { ts: number }[];

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
      // Each section's share of 20 s, so a busy machine (files run side by side) still measures the disk.
      'bench.max_seconds': '20',
      'bench.max_disk_mb': '16',
    });
    const registered = await fetch(`${consoleProcess.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...USER, name: 'Chart Reader' }),
    });
    assert.equal(registered.status, 201);
    cookie = registered.headers.get('set-cookie')!.split(';')[0]!;
    const product = await api('POST', '/api/products', { catalog_id: 2 });
    assert.equal(product.status, 201, JSON.stringify(product.body));
    const added = await api('POST', '/api/servers', {
      product_id: product.body.data.product.id,
      name: 'chart-1',
      api_url: agent.url,
      api_key: agent.key,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    serverId = added.body.data.server.id;
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await agent?.stop();
    await consoleProcess?.kill();
    data.remove();
  });

  async function signedIn(page: Page) {
    await page.goto('/dashboard/sign-in');
    await page.getByLabel('Email').fill(USER.email);
    await page.getByLabel('Password').fill(USER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Fleet' }).waitFor();
  }

  /** Runs a benchmark through the API and waits for the agent to finish it. */
  async function benchmark(label: string) {
    const queued = await api('POST', `/api/servers/${serverId}/benchmarks`, { label });
    assert.equal(queued.status, 201, JSON.stringify(queued.body));
    const id = queued.body.data.run.id;
    return eventually(
      `benchmark "${label}" to finish`,
      async () => {
        const runs = (await api('GET', `/api/servers/${serverId}/benchmarks`)).body.data.runs;
        const run = runs.find((r: { id: number }) => r.id === id);
        assert.notEqual(run.status, 'failed', run.error);
        return run.status === 'done' ? run : undefined;
      },
      120_000,
    );
  }

  test('two benchmark runs: figures in units, and a comparison with the change in %', async () => {
    await eventually('the agent to check in', async () => ((await samplesInHour()).length > 0 ? true : undefined));
    const first = await benchmark('Before the upgrade');
    const second = await benchmark('After the upgrade');
    assert.ok(first.measurements && second.measurements, 'the raw figures are kept');

    const session = await newSession(browser, consoleProcess.url, { width: 1280, height: 1100 });
    try {
      const { page } = session;
      await signedIn(page);
      await page.goto(`/dashboard/servers/${serverId}/benchmarks`);
      const table = page.getByRole('table', { name: 'Benchmark comparison' });
      await table.waitFor();
      assert.equal(await page.getByLabel('Before', { exact: true }).inputValue(), String(first.id));
      assert.equal(await page.getByLabel('After', { exact: true }).inputValue(), String(second.id));
      assert.deepEqual(await table.locator('thead th').allTextContents(), [
        'Figure',
        'Before the upgrade',
        'After the upgrade',
        'Change',
      ]);

      const row = async (name: string) =>
        (await table.getByRole('row').filter({ hasText: name }).locator('th, td').allTextContents()).map((c) =>
          c.trim(),
        );
      // A section the agent could not finish in its share of the time (a loaded machine) is shown as
      // not measured, never as a number: each figure is held to what its run really measured.
      const figure = (cell: string | undefined, run: typeof first, section: string, unit: RegExp) =>
        run.measurements[section] === null
          ? assert.equal(cell, '—', `${section} was not measured in run ${run.id}`)
          : assert.match(cell!, unit);
      const write = await row('Sequential write with fsync');
      figure(write[1], first, 'disk', /^[\d,.]+ MB\/s$/);
      figure(write[2], second, 'disk', /^[\d,.]+ MB\/s$/);
      if (first.measurements.disk && second.measurements.disk)
        assert.match(write[3]!, /^(0 %|[+−][\d,.]+ %( better| worse)?)$/);
      figure((await row('4 KiB synchronous random writes'))[1], first, 'disk', /^[\d,.]+ IOPS$/);
      figure((await row('Median round trip'))[1], first, 'network', /^[\d,.]+ ms$/);
      assert.match((await row('Total score'))[1]!, /^[\d.]+$/);
      // Every figure on the page: no more than three significant digits once it has decimals.
      const text = (await page.locator('main td, main dd').allTextContents()).join('\n');
      const long = (text.match(/\d[\d,]*\.\d+/g) ?? []).filter(
        (n) => n.replace(/[,.]/g, '').replace(/^0+/, '').length > 3,
      );
      assert.deepEqual(long, [], 'figures with more than three significant digits');

      const newest = page.locator(`[data-run="${second.id}"]`);
      await newest.getByText('Figures and scales').click();
      const figures = newest.getByRole('table', { name: 'Figures of After the upgrade' });
      await figures.getByText('0 at 20 MB/s, 100 at 2,000 MB/s (log), 50 % of CPU').waitFor();
      await page
        .getByRole('heading', { name: 'Compare two runs' })
        .evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await screenshot(page, 'benchmark-compare');
      // Picking other runs recomputes the table: the same run on both sides changes nothing.
      await page.getByLabel('Before', { exact: true }).selectOption(String(second.id));
      assert.equal((await row('Sequential write with fsync'))[3], '0 %');
      // 375 px wide the comparison becomes cards and nothing runs off the screen.
      await page.setViewportSize({ width: 375, height: 800 });
      await page
        .getByRole('heading', { name: 'Compare two runs' })
        .evaluate((el) => el.scrollIntoView({ block: 'start' }));
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      assert.ok(overflow <= 1, `the page is ${overflow}px wider than the screen`);
      session.assertNoErrors();
    } finally {
      await session.close();
    }
  });

  test('an outage is a gap in the history; axes read as times; legend values carry units', async () => {
    // The hour before the agent started: samples every 30 s from 55 to 35 minutes ago and from 20 to
    // 5 minutes ago, sent in one check-in with the agent's own daemon token, as the agent sends what it
    // kept while the console was away. The 15 minutes between are the outage.
    await eventually('the agent to check in', async () => ((await samplesInHour()).length > 0 ? true : undefined));
    const { token } = JSON.parse(readFileSync(join(agent.stateDir, 'enrolment.json'), 'utf8')) as { token: string };
    const facts = (await api('GET', `/api/servers/${serverId}/section?name=facts`)).body.data;
    const now = Date.now();
    const past: Record<string, number>[] = [];
    for (let ago = 55 * 60; ago >= 5 * 60; ago -= 30) {
      if (ago < 35 * 60 && ago > 20 * 60) continue;
      const wave = Math.sin(ago / 300);
      past.push({
        ts: now - ago * 1000,
        cpu_pct: 30 + 15 * wave,
        mem_used_mb: 1800 + 200 * wave,
        mem_total_mb: 4000,
        disk_used_pct: 25,
        load1: 0.8 + 0.4 * wave,
        rx_bps: 60_000 + 30_000 * wave,
        tx_bps: 20_000 + 10_000 * wave,
      });
    }
    const checkin = await fetch(`${consoleProcess.url}/api/agent/checkin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({
        agent_version: facts.agent_version,
        hostname: facts.hostname,
        facts: facts.facts,
        sample: { ...past.at(-1)!, ts: now },
        past_samples: past,
      }),
    });
    assert.equal(checkin.status, 200, await checkin.text());

    const session = await newSession(browser, consoleProcess.url, { width: 1280, height: 1000 });
    try {
      const { page } = session;
      await signedIn(page);
      await page.goto(`/dashboard/servers/${serverId}/history`);
      await page.getByRole('heading', { name: 'History' }).waitFor();
      const usage = page.getByRole('img', { name: 'CPU, memory and disk (%) chart' });
      await usage.waitFor();
      const hour = await drawn(usage);
      assert.ok(hour.to - hour.from === 3600, 'the hour is drawn whole, though the server is minutes old');
      assert.ok(hour.x[0]! >= hour.from - 10 && hour.x.at(-1)! <= hour.to, 'nothing before the window or after now');
      // The 15 minutes without samples: a null slot between the last value before and the first after.
      const gaps = innerGaps(hour.series[0]!).map(([a, b]) => hour.x[b + 1]! - hour.x[a - 1]!);
      assert.ok(
        gaps.some((seconds) => seconds >= 14 * 60 && seconds <= 16 * 60),
        `a gap of about 15 minutes where the outage was (gaps, in s: ${gaps})`,
      );
      assert.ok(hour.series[0]!.filter((v) => v !== null).length >= 60, 'the samples either side are drawn');
      for (const tick of hour.xTicks) assert.match(tick, /^\d{2}:\d{2}$/, 'times of day');
      assert.equal(new Set(hour.xTicks).size, hour.xTicks.length);
      assert.equal(new Set(hour.yTicks).size, hour.yTicks.length, `y ticks differ: ${hour.yTicks}`);
      for (const tick of hour.yTicks) assert.match(tick, /^\d+ %$/);
      for (const value of hour.legend) assert.match(value, /^\d+(\.\d)? %$/, `legend: ${hour.legend}`);

      const net = await drawn(page.getByRole('img', { name: 'Network (bit/s) chart' }));
      for (const value of net.legend) assert.match(value, /^[\d.,]+ [kMG]?bit\/s$/, `legend: ${net.legend}`);
      assert.equal(new Set(net.yTicks).size, net.yTicks.length, `y ticks differ: ${net.yTicks}`);
      const load = await drawn(page.getByRole('img', { name: 'Load (1 min average, no unit) chart' }));
      for (const value of load.legend) assert.match(value, /^\d+(\.\d{1,3})?$/);
      await page.getByRole('heading', { name: 'History' }).evaluate((el) => el.scrollIntoView({ block: 'start' }));
      await screenshot(page, 'history-gap');

      // 30 days with a few minutes of data: the window is the last 30 days, the ticks are dates.
      await page.getByText('30 days').click();
      await eventually('the 30-day chart', async () => {
        const month = await drawn(page.getByRole('img', { name: 'CPU, memory and disk (%) chart' }));
        return month.to - month.from === 30 * 86_400 ? month : undefined;
      }).then((month) => {
        for (const tick of month.xTicks) assert.match(tick, /^[A-Z][a-z]{2} \d{1,2}$/, 'dates');
        assert.equal(new Set(month.xTicks).size, month.xTicks.length);
        assert.ok(month.to <= Date.now() / 1000 + 60, 'never an axis into the future');
      });

      // The live chart keeps the last minutes across a reload: it starts from the console's samples.
      const loadedAt = Date.now() / 1000;
      await page.goto(`/dashboard/servers/${serverId}`);
      const liveChart = page.getByRole('img', { name: 'CPU and memory, last minutes chart' });
      await liveChart.waitFor();
      const live = await drawn(liveChart);
      assert.equal(live.to - live.from, 300);
      assert.ok(
        live.x.some((ts, i) => live.series[0]![i] !== null && ts < loadedAt - 10),
        'points from before the page was loaded: the recent history is drawn too',
      );
      for (const tick of live.xTicks) assert.match(tick, /^\d{2}:\d{2}(:\d{2})?$/, 'never `:19.250`');
      session.assertNoErrors();
    } finally {
      await session.close();
    }
  });
});
