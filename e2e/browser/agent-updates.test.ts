import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { generateToken, hashToken } from '@palisade/protocol';
import SQLite from 'better-sqlite3';
import type { Page } from 'playwright-core';
import {
  assertAccessible,
  browserSkipReason,
  consoleWithBrowser,
  registerWithProduct,
  screenshot,
  signInThroughPage,
} from '../support/browser.js';
import { runConsoleCli, tempDir } from '../support/processes.js';

const skip = browserSkipReason();
const USER = { email: 'agent-updates@example.com', password: 'correct horse battery' };
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The fleet runs OLD; the console serves NEW, built and signed by scripts/package.mjs as a release is. */
const OLD = '0.1.0';
const NEW = '0.9.0';
const SERVERS = 200;

/**
 * Fleet → Agent updates end to end (docs/dashboard.md, "Agent updates"; docs/fleet.md, "Agent
 * updates"): a console serving a signed agent release, 200 servers speaking the check-in protocol on
 * an older version, and Chromium. The rollout is started in the page, its first wave is offered in the
 * servers' check-in answers, and a check-in on the new version shows the server updated, live.
 */
describe('agent updates in the browser', { skip: skip ?? false }, () => {
  const release = tempDir('palisade-web-release-');
  const artifacts = join(release.path, 'out');
  const daemons: string[] = [];
  after(() => release.remove());

  // Before the console starts (hooks run in order): the signed release it will serve.
  before(async () => {
    const keyFile = join(release.path, 'release.key');
    const made = await runConsoleCli({}, ['release-key', 'new', '--out', keyFile]);
    assert.equal(made.code, 0, made.out);
    const built = spawnSync(
      process.execPath,
      [
        join(ROOT, 'scripts/package.mjs'),
        '--agent-only',
        '--agent-version',
        NEW,
        '--sign-key',
        keyFile,
        '--out',
        artifacts,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(built.status, 0, `${built.stdout}${built.stderr}`);
  });
  const suite = consoleWithBrowser('palisade-web-updates-', { PALISADE_ARTIFACTS_DIR: artifacts }, seedFleet);

  const sample = () => ({
    ts: Date.now(),
    cpu_pct: 5,
    mem_used_mb: 1024,
    mem_total_mb: 8192,
    disk_used_pct: 40,
    load1: 0.2,
    rx_bps: 1000,
    tx_bps: 1000,
  });
  const checkin = async (daemon: string, body: Record<string, unknown> = {}) => {
    const res = await fetch(`${suite.url}/api/agent/checkin`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon}` },
      body: JSON.stringify({ agent_version: OLD, hostname: 'node', facts: { cores: 2 }, sample: sample(), ...body }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return ((await res.json()) as { data: { update?: { rollout_id: number; version: string } } }).data;
  };

  async function seedFleet(url: string, dataDir: string) {
    const cookie = await registerWithProduct(url, { ...USER, name: 'Dana Ops' });
    const me = (await (await fetch(`${url}/api/account/me`, { headers: { cookie } })).json()) as {
      data: { id: number };
    };
    const products = (await (await fetch(`${url}/api/products`, { headers: { cookie } })).json()) as {
      data: { products: { id: number }[] };
    };
    // A fleet larger than a product's limit, written straight into the console's database as an
    // operator's import would (as e2e/browser/fleet-table.test.ts does); all else goes through the API.
    const db = new SQLite(join(dataDir, 'console.db'));
    const insert = db.prepare(
      `insert into servers (account_id, product_id, name, api_url, api_key_enc, facts, daemon_token_hash, tags, created_at)
       values (?, ?, ?, ?, 'unused', '{}', ?, ?, ?)`,
    );
    for (let i = 1; i <= SERVERS; i++) {
      const daemon = generateToken('daemon');
      daemons.push(daemon);
      const tags = JSON.stringify(i % 4 === 0 ? ['db'] : ['web']);
      insert.run(
        me.data.id,
        products.data.products[0]!.id,
        `node-${String(i).padStart(3, '0')}`,
        `http://10.0.${Math.floor(i / 250)}.${i % 250}:9100`,
        hashToken(daemon),
        tags,
        Date.now(),
      );
    }
    db.close();
    // Every server online on the old version, 20 at a time.
    for (let i = 0; i < SERVERS; i += 20)
      await Promise.all(
        daemons.slice(i, i + 20).map((d) => checkin(d).then((a) => assert.equal(a.update ?? null, null))),
      );
  }

  /** The count shown for `state` in wave `n` (1-based), or 0 when the wave shows none in that state. */
  const waveCount = async (page: Page, n: number, state: string) => {
    const item = page
      .getByRole('list', { name: `Wave ${n} by state` })
      .getByRole('listitem')
      .filter({ hasText: state });
    return (await item.count()) === 0 ? 0 : Number(await item.locator('strong').textContent());
  };
  const waitForWave = (page: Page, n: number, state: string, count: number) =>
    page
      .getByRole('list', { name: `Wave ${n} by state` })
      .getByRole('listitem')
      .filter({ hasText: new RegExp(`^${state} ${count}$`) })
      .waitFor();

  test('start a rollout in the page, see wave 1 offered, a server updated, the next wave, then cancel', async () => {
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.getByRole('link', { name: 'Agent updates' }).click();
      await page.getByRole('heading', { name: 'Agent updates', level: 1 }).waitFor();
      assert.equal(await page.getByTestId('served-version').textContent(), NEW);
      await page.getByText('Signed', { exact: true }).waitFor();
      assert.equal(await page.getByTestId('outdated').textContent(), `${SERVERS} servers`);
      await page.getByText('No rollout has ended yet.').waitFor();

      // The form: the tag picker lists the account's tags; waves are checked as typed.
      const form = page.getByRole('form', { name: 'Start a rollout' });
      assert.deepEqual(await form.getByLabel('Servers').locator('option').allTextContents(), [
        'All servers',
        'Tagged db (50 servers)',
        'Tagged web (150 servers)',
      ]);
      const waves = form.getByLabel('Waves');
      assert.equal(await waves.inputValue(), '1,10%,100%');
      await waves.fill('2,ten%');
      await form.getByText('waves: "ten%" is not a count (5) or a percentage (10%)').waitFor();
      assert.equal(await waves.getAttribute('aria-invalid'), 'true');
      assert.ok(await form.getByRole('button', { name: `Start rollout to ${NEW}` }).isDisabled());
      await waves.fill('2,10%,100%');
      assert.equal(
        await form.getByTestId('wave-reach').textContent(),
        `With ${SERVERS} servers: wave 1: 2 servers, wave 2: 20, wave 3: 200.`,
      );
      await form.getByLabel('Health timeout (minutes)').fill('90');
      await form.getByText('health timeout: expected minutes from 0.5 to 60').waitFor();
      await form.getByLabel('Health timeout (minutes)').fill('5');
      await page.screenshot({ path: '/tmp/l2-agent-updates-form.png', fullPage: true });
      await form.getByRole('button', { name: `Start rollout to ${NEW}` }).click();

      // Wave 1 (two servers, the first by id) is offered; the rest wait.
      await page.getByRole('heading', { name: `Rollout 1 to ${NEW}` }).waitFor();
      await waitForWave(page, 1, 'Offered', 2);
      assert.equal(await waveCount(page, 2, 'Pending'), 18);
      assert.equal(await waveCount(page, 3, 'Pending'), 180);
      await page.getByText('5 min', { exact: true }).waitFor();
      const filters = page.getByRole('group', { name: 'Servers by state' });
      await filters.getByRole('button', { name: 'Offered 2' }).click();
      const rows = page.locator('table.rollout-servers tbody tr');
      await page.getByText('2 of 200 servers offered').waitFor();
      assert.deepEqual(await rows.locator('td[data-label="Server"]').allTextContents(), ['node-001', 'node-002']);
      assert.equal(await rows.first().locator('td[data-label="Version"]').textContent(), `${OLD} → ${NEW}`);

      // The offer is in those servers' check-in answers, and in no other's.
      const offer = await checkin(daemons[0]!);
      assert.equal(offer.update?.version, NEW);
      assert.equal(offer.update?.rollout_id, 1);
      assert.equal((await checkin(daemons[2]!)).update ?? null, null, 'node-003 is in wave 2, not started');

      // node-001 reports it is downloading, then checks in on the new version: the page follows, live.
      await checkin(daemons[0]!, { update: { rollout_id: 1, version: NEW, state: 'downloading', reason: null } });
      await waitForWave(page, 1, 'Downloading', 1);
      await checkin(daemons[0]!, { agent_version: NEW });
      await waitForWave(page, 1, 'Updated', 1);
      await filters.getByRole('button', { name: 'All 200' }).click();
      await page
        .getByRole('navigation', { name: 'Pages of servers' })
        .getByText(/^Page 1 of 4/)
        .waitFor();
      assert.equal(await rows.count(), 50, '200 servers are pages of 50');
      const first = page.locator('tr[data-server="node-001"]');
      assert.equal(await first.locator('td[data-label="State"]').textContent(), 'Updated');
      await page.getByRole('button', { name: 'Next →' }).click();
      await page
        .getByRole('navigation', { name: 'Pages of servers' })
        .getByText(/^Page 2 of 4/)
        .waitFor();
      assert.equal(new URL(page.url()).searchParams.get('page'), '2', 'the page is kept in the address');

      // node-002 updated too: wave 1 is done and wave 2 (18 more, up to 10 % in all) is offered.
      await checkin(daemons[1]!, { agent_version: NEW });
      await waitForWave(page, 2, 'Offered', 18);
      assert.equal(await waveCount(page, 1, 'Updated'), 2);
      assert.equal((await checkin(daemons[2]!)).update?.version, NEW, 'node-003 is offered now');
      await page.getByTestId('rollout-updated').getByText('2 of 200 servers').waitFor();

      await page.getByRole('button', { name: '← Previous' }).click();
      await page
        .getByRole('navigation', { name: 'Pages of servers' })
        .getByText(/^Page 1 of 4/)
        .waitFor();
      for (const [name, viewport] of [
        ['1280', { width: 1280, height: 800 }],
        ['375', { width: 375, height: 812 }],
      ] as const) {
        await page.setViewportSize(viewport);
        for (const scheme of ['light', 'dark'] as const) {
          await page.emulateMedia({ colorScheme: scheme });
          await page.evaluate(() => window.scrollTo(0, 0));
          await page.screenshot({ path: `/tmp/l2-agent-updates-${name}-${scheme}.png` });
          await page.getByRole('heading', { name: 'Servers', level: 3 }).evaluate((h) => h.scrollIntoView());
          await page.screenshot({ path: `/tmp/l2-agent-updates-${name}-${scheme}-servers.png` });
          await assertAccessible(page, `agent updates at ${name} px (${scheme})`);
          const wide = await page.evaluate(() => document.documentElement.scrollWidth);
          assert.ok(wide <= viewport.width, `the page is ${wide} px wide at ${viewport.width} px`);
        }
      }
      await page.setViewportSize({ width: 1280, height: 800 });
      await page.emulateMedia({ colorScheme: 'light' });
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshot(page, 'agent-updates');

      // Cancel, confirmed: the pending servers are skipped; the rollout goes to the history.
      await page.getByRole('button', { name: 'Cancel rollout' }).click();
      await page.getByRole('button', { name: 'Yes, cancel the rollout' }).click();
      const history = page.getByRole('table', { name: 'Past rollouts' });
      await history.getByRole('link', { name: 'Rollout 1' }).waitFor();
      assert.match((await history.locator('td[data-label="Outcome"]').textContent()) ?? '', /^Cancelled/);
      assert.equal(await history.locator('td[data-label="Updated"]').textContent(), '2 of 200');
      await page.getByRole('form', { name: 'Start a rollout' }).waitFor();
      assert.equal(await page.getByTestId('outdated').textContent(), `${SERVERS - 2} servers`);

      await history.getByRole('link', { name: 'Rollout 1' }).click();
      await page.getByRole('heading', { name: 'Rollout 1', level: 1 }).waitFor();
      assert.equal(await waveCount(page, 3, 'Skipped'), 180, 'pending servers were skipped');
      assert.equal(await page.getByRole('button', { name: 'Cancel rollout' }).count(), 0, 'nothing left to cancel');
      await page
        .getByRole('group', { name: 'Servers by state' })
        .getByRole('button', { name: /^Skipped/ })
        .click();
      await page
        .locator('tr[data-server="node-021"] td[data-label="Reason"]')
        .getByText(/cancelled/)
        .waitFor();
    });
  });
  test("a tag's rollout fails when a server rolls back, saying why; the rest are skipped", async () => {
    // Rollout 1 was cancelled with wave 2 (node-003 to node-020) offered: those agents went on and
    // check in on the new version, so the db servers among them are not in the next rollout.
    for (const d of daemons.slice(2, 20)) await checkin(d, { agent_version: NEW });
    await suite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/agent-updates');
      assert.equal(await page.getByTestId('outdated').textContent(), `${SERVERS - 20} servers`);

      // Only the db servers (every fourth), in two waves: one, then the rest.
      const form = page.getByRole('form', { name: 'Start a rollout' });
      await form.getByLabel('Servers').selectOption('db');
      await form.getByText('50 servers tagged db; those on another version than').waitFor();
      await form.getByLabel('Waves').fill('1');
      await form.getByRole('button', { name: `Start rollout to ${NEW}` }).click();
      await page.getByRole('heading', { name: `Rollout 2 to ${NEW}` }).waitFor();
      await waitForWave(page, 1, 'Offered', 1);
      assert.equal(await waveCount(page, 2, 'Pending'), 44, 'the 45 db servers not updated yet, one in wave 1');
      const offered = page.locator('tr[data-server="node-024"]');
      assert.equal(await offered.locator('td[data-label="State"]').textContent(), 'Offered');

      // node-024's root updater put the previous version back: the rollout fails and says why.
      const offer = await checkin(daemons[23]!);
      assert.equal(offer.update?.rollout_id, 2);
      const reason = 'the new version did not check in within 5 min 0 s; the previous one is back';
      await checkin(daemons[23]!, { update: { rollout_id: 2, version: NEW, state: 'rolled_back', reason } });
      await page.getByTestId('rollout-reason').waitFor();
      await waitForWave(page, 1, 'Rolled back', 1);
      assert.equal(await offered.locator('td[data-label="State"]').textContent(), 'Rolled back');
      assert.equal(await offered.locator('td[data-label="Reason"]').textContent(), reason);
      assert.equal(await waveCount(page, 2, 'Skipped'), 44, 'the rest are skipped');
      await page.getByRole('form', { name: 'Start a rollout' }).waitFor();
      const history = page.getByRole('table', { name: 'Past rollouts' });
      assert.deepEqual(await history.locator('td[data-label="Rollout"]').allTextContents(), ['Rollout 2', 'Rollout 1']);
      assert.match((await history.locator('td[data-label="Outcome"]').first().textContent()) ?? '', /^Failed/);
      await page.emulateMedia({ colorScheme: 'dark' });
      await assertAccessible(page, 'a failed rollout (dark)');
      await page.getByTestId('rollout-reason').evaluate((note) => note.scrollIntoView());
      await page.screenshot({ path: '/tmp/l2-agent-updates-failed-dark.png' });
    });
  });
});

/** Nothing to roll out: the page says why and offers no form, and the console refuses the start (409) in the same terms. */
describe('agent updates in the browser: unsigned or no release', { skip: skip ?? false }, () => {
  const release = tempDir('palisade-web-unsigned-');
  const unsigned = join(release.path, 'unsigned');
  const empty = join(release.path, 'empty');
  after(() => release.remove());
  before(() => {
    const built = spawnSync(
      process.execPath,
      [join(ROOT, 'scripts/package.mjs'), '--agent-only', '--agent-version', NEW, '--out', unsigned],
      { encoding: 'utf8' },
    );
    assert.equal(built.status, 0, `${built.stdout}${built.stderr}`);
    mkdirSync(empty);
  });
  const cookies: string[] = [];
  const signedUp = (i: number) => async (url: string) => {
    cookies[i] = await registerWithProduct(url, { ...USER, name: 'Dana Ops' });
  };
  const unsignedSuite = consoleWithBrowser('palisade-web-unsigned-', { PALISADE_ARTIFACTS_DIR: unsigned }, signedUp(0));
  const emptySuite = consoleWithBrowser('palisade-web-nopackages-', { PALISADE_ARTIFACTS_DIR: empty }, signedUp(1));

  const start = (url: string, cookie: string) =>
    fetch(`${url}/api/agent-updates`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie },
      body: '{}',
    });

  test('an unsigned release is shown as such, with what to do, and cannot be rolled out', async () => {
    assert.equal((await start(unsignedSuite.url, cookies[0]!)).status, 409);
    await unsignedSuite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/agent-updates');
      assert.equal(await page.getByTestId('served-version').textContent(), NEW);
      await page.getByText('Unsigned', { exact: true }).waitFor();
      await page.getByText('Agents refuse unsigned updates.').waitFor();
      assert.equal(await page.getByRole('form', { name: 'Start a rollout' }).count(), 0);
      await assertAccessible(page, 'an unsigned release');
    });
  });

  test('without packages the page says there is nothing to roll out and how to serve a release', async () => {
    assert.equal((await start(emptySuite.url, cookies[1]!)).status, 409);
    await emptySuite.run(async (page) => {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/agent-updates');
      assert.equal(await page.getByTestId('served-version').textContent(), 'none');
      await page.getByText(/This console serves no agent packages, so there is nothing to roll out\./).waitFor();
      assert.equal(await page.getByRole('form', { name: 'Start a rollout' }).count(), 0);
    });
  });
});
