import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { browserSkipReason, launchBrowser, newSession, screenshot, signInThroughPage } from '../support/browser.js';
import {
  type AgentProcess,
  type ConsoleProcess,
  eventually,
  startAgent,
  startConsoleProcess,
  tempDir,
} from '../support/processes.js';

const skip = browserSkipReason();
const USER = { name: 'Alex Alerts', email: 'alerts@example.com', password: 'correct horse battery' };

/**
 * Settings → Alerts in Chromium against a real console with one real agent (docs/alerts.md): a
 * Slack-format channel on a local receiver, its "Send a test", a rule added and then edited in the
 * same form, and the history with the delivered test.
 */
describe('alerts in a browser', { skip: skip ?? false }, () => {
  const data = tempDir('palisade-web-alerts-');
  let consoleProcess: ConsoleProcess;
  let agent: AgentProcess;
  let browser: Browser;
  const received: string[] = [];
  const receiver = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString('utf8');
    });
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end('ok');
    });
  });

  // A real SMTP server (packages/console/test/smtp-receiver.ts) in its own process: one JSON line per mail.
  let smtp: ChildProcess;
  const mails: { to: string[]; data: string }[] = [];

  before(async () => {
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    smtp = spawn(
      process.execPath,
      [new URL('../../../packages/console/dist/test/smtp-receiver.js', import.meta.url).pathname],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    const smtpPort = await new Promise<number>((resolve) => {
      createInterface({ input: smtp.stdout! }).on('line', (line) => {
        const listening = /^listening (\d+)$/.exec(line);
        if (listening) resolve(Number(listening[1]));
        else mails.push(JSON.parse(line));
      });
    });
    consoleProcess = await startConsoleProcess({
      PALISADE_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
      PALISADE_DATA_DIR: data.path,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
    });
    agent = await startAgent({ 'checkin.interval_s': '5' });
    const api = async (method: string, path: string, cookie: string | null, body: unknown) => {
      const res = await fetch(`${consoleProcess.url}${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          origin: consoleProcess.url,
          ...(cookie ? { cookie } : {}),
        },
        body: JSON.stringify(body),
      });
      return res;
    };
    const registered = await api('POST', '/api/auth/register', null, USER);
    assert.equal(registered.status, 201);
    const cookie = registered.headers.get('set-cookie')!.split(';')[0]!;
    const product = await api('POST', '/api/products', cookie, { catalog_id: 1 });
    assert.equal(product.status, 201);
    const productId = (await product.json()).data.product.id;
    const added = await api('POST', '/api/servers', cookie, {
      product_id: productId,
      name: 'web-1',
      api_url: agent.url,
      api_key: agent.key,
    });
    assert.equal(added.status, 201, await added.clone().text());
    const id = (await added.json()).data.server.id;
    await eventually('web-1 to check in', async () => {
      const res = await fetch(`${consoleProcess.url}/api/servers/${id}`, { headers: { cookie } });
      return (await res.json()).data.server.state === 'online' ? true : undefined;
    });
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await agent?.stop();
    await consoleProcess?.kill();
    smtp?.kill('SIGTERM');
    await new Promise((resolve) => receiver.close(resolve));
    data.remove();
  });

  test('a channel and its test, a rule added then edited, the history with the delivered test', async () => {
    const session = await newSession(browser, consoleProcess.url, { width: 1280, height: 1000 });
    const { page } = session;
    try {
      await signInThroughPage(page, USER);

      await page.goto('/dashboard/settings/alerts');
      await page.getByRole('heading', { name: 'Alert channels' }).waitFor();
      await page.getByText('No channels yet.').waitFor();
      // When the rules were last evaluated, by any console (docs/alerts.md, "Timing").
      await page
        .getByTestId('alert-evaluation')
        .getByText(/Rules last checked \d+ s ago \(every 15 s\)\./)
        .waitFor();
      await page.getByLabel('Channel name').fill('ops-slack');
      await page.getByLabel('Kind').selectOption('slack');
      await page.getByLabel('Webhook URL').fill(`http://127.0.0.1:${(receiver.address() as AddressInfo).port}/slack`);
      await page.getByRole('button', { name: 'Add channel' }).click();
      const channelRow = page.getByRole('row').filter({ hasText: 'ops-slack' });
      await channelRow.waitFor();
      await channelRow.getByRole('button', { name: 'Send a test' }).click();
      await channelRow.getByText(/Test delivered \(HTTP 200\)/).waitFor();
      assert.equal(received.length, 1);
      assert.match(JSON.parse(received[0]!).text, /Palisade test notification for ops-slack/);

      // Add: the form shows only what the chosen kind uses.
      const add = page.getByRole('form', { name: 'Add an alert rule' });
      await add.getByLabel('Rule name').fill('Web down');
      assert.equal(await add.getByLabel('Unreachable for (minutes)').count(), 0);
      await add.getByLabel('ops-slack (slack)').check();
      await add.getByLabel('web-1').check();
      await add.getByRole('button', { name: 'Add rule' }).click();
      await page.getByText('Rule Web down added.').waitFor();
      const rules = page.getByRole('table', { name: 'Alert rules' });
      const ruleRow = rules.getByRole('row').filter({ hasText: 'Web down' });
      await ruleRow.getByText('no check-in for 2 minutes').waitFor();
      await ruleRow.getByText('web-1').waitFor();

      // Edit: the same form, filled in; a bad value names the field; the saved rule replaces the row.
      await ruleRow.getByRole('button', { name: 'Edit' }).click();
      const edit = page.getByRole('form', { name: 'Edit rule Web down' });
      assert.equal(await edit.getByLabel('Rule name').inputValue(), 'Web down');
      assert.equal(await edit.getByLabel('When').inputValue(), 'offline');
      assert.equal(await edit.getByLabel('ops-slack (slack)').isChecked(), true);
      assert.equal(await edit.getByLabel('web-1').isChecked(), true);
      await edit.getByLabel('Rule name').fill('Web unreachable');
      await edit.getByLabel('When').selectOption('unreachable');
      await edit.getByLabel('Unreachable for (minutes)').fill('5000');
      await edit.getByRole('button', { name: 'Save rule' }).click();
      await edit.getByText('Minutes: Enter 0 to 1440.').waitFor();
      await edit.getByLabel('Unreachable for (minutes)').fill('10');
      await edit.getByRole('button', { name: 'Save rule' }).click();
      await page.getByText('Rule Web unreachable saved.').waitFor();
      await add.waitFor();
      await rules
        .getByRole('row')
        .filter({ hasText: 'Web unreachable' })
        .getByText('the agent unreachable for 10 min')
        .waitFor();
      assert.equal(await rules.getByRole('row').filter({ hasText: 'Web down' }).count(), 0);

      // Maintenance: the server can be muted and unmuted.
      const maintenance = page.getByRole('table', { name: 'Maintenance' });
      await maintenance.getByRole('button', { name: 'Mute 1 h' }).first().click();
      await maintenance
        .getByText(/^Muted until/)
        .first()
        .waitFor();
      await maintenance.getByRole('button', { name: 'Unmute' }).first().click();
      await maintenance.getByRole('button', { name: 'Mute 1 h' }).first().waitFor();

      const history = page.getByRole('table', { name: 'Alert history' });
      const delivered = history.getByRole('row').filter({ hasText: 'Palisade test notification for ops-slack' });
      await delivered.getByText(/^delivered/).waitFor();
      // The whole settings page in one picture: channels, rules, maintenance and history.
      const height = await page.evaluate(() => document.documentElement.scrollHeight);
      await page.setViewportSize({ width: 1280, height: Math.min(height, 2400) });
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshot(page, 'settings-alerts');
      session.assertNoErrors();
    } catch (err) {
      const shot = join(tmpdir(), `palisade-e2e-failure-${Date.now()}.png`);
      await page.screenshot({ path: shot }).catch(() => {});
      throw new Error(`${(err as Error).message}\nat ${page.url()}; screenshot: ${shot}`, { cause: err });
    } finally {
      await session.close();
    }
  });

  test('an e-mail channel waits for confirmation: no test button, a resend, then confirmed from the link in the mail', async () => {
    const session = await newSession(browser, consoleProcess.url, { width: 1280, height: 900 });
    const { page } = session;
    try {
      await signInThroughPage(page, USER);
      await page.goto('/dashboard/settings/alerts');
      await page.getByRole('heading', { name: 'Alert channels' }).waitFor();
      await page.getByLabel('Channel name').fill('on-call mail');
      await page.getByLabel('Kind').selectOption('email');
      await page.getByLabel('E-mail address').fill('oncall@example.com');
      await page.getByRole('button', { name: 'Add channel' }).click();
      await page.getByText(/A confirmation e-mail went to oncall@example\.com/).waitFor();
      const row = page.getByRole('row').filter({ hasText: 'on-call mail' });
      await row.getByText('Waiting for confirmation', { exact: true }).waitFor();
      assert.equal(await row.getByRole('button', { name: 'Send a test' }).count(), 0, 'no test while waiting');
      await row.getByRole('button', { name: 'Resend confirmation' }).click();
      await page.getByText(/A new confirmation e-mail went to oncall@example\.com/).waitFor();
      await page.evaluate(() => window.scrollTo(0, 0));
      await screenshot(page, 'settings-alerts-email-waiting');

      // The latest mail's link: a page with one button; pressing it confirms the channel.
      const latest = await eventually('the second confirmation mail', async () =>
        mails.filter((m) => m.to.includes('oncall@example.com')).length >= 2 ? mails.at(-1) : undefined,
      );
      assert.match(latest.data, /Subject: Confirm alert e-mails from Palisade/);
      assert.doesNotMatch(latest.data, /on-call mail/, 'no words of the account in the mail');
      const text = latest.data.replace(/=\r?\n/g, '').replace(/=3D/g, '=');
      const link = /(https?:\/\/\S+\/alerts\/confirm\?token=[A-Za-z0-9_-]+)/.exec(text)![1]!;
      await page.goto(link);
      await page.getByRole('heading', { name: 'Confirm alert e-mails' }).waitFor();
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.getByRole('heading', { name: 'Alert e-mails confirmed' }).waitFor();

      await page.goto('/dashboard/settings/alerts');
      const confirmed = page.getByRole('row').filter({ hasText: 'on-call mail' });
      await confirmed.getByRole('button', { name: 'Send a test' }).waitFor();
      assert.equal(await confirmed.getByText('Waiting for confirmation', { exact: true }).count(), 0);
    } catch (err) {
      const shot = join(tmpdir(), `palisade-e2e-failure-${Date.now()}.png`);
      await page.screenshot({ path: shot }).catch(() => {});
      throw new Error(`${(err as Error).message}\nat ${page.url()}; screenshot: ${shot}`, { cause: err });
    } finally {
      await session.close();
    }
  });
});
