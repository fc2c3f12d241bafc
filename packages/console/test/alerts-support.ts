// Local stand-ins for the alert tests (alerts*.test.ts): a webhook receiver, a real SMTP server in a
// process of its own (smtp-receiver.ts), a check-in sample, and the calls the tests make.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { generateToken, hashToken } from '@palisade/protocol';
import { readBody } from '@palisade/testkit';
import { createServices } from '../src/services/plugins.js';
import { insertTestServer, type TestApp, type TestUser } from './support.js';

export interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A real local receiver: answers 204 and keeps every request. */
export async function receiver() {
  const got: Received[] = [];
  const server = http.createServer(async (req, res) => {
    got.push({ path: req.url ?? '', headers: req.headers, body: await readBody(req) });
    res.writeHead(204).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { base, got, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** The SMTP server of packages/console/test/smtp-receiver.ts, in a process of its own. */
export async function smtpReceiver() {
  const child: ChildProcess = spawn(process.execPath, [fileURLToPath(new URL('./smtp-receiver.js', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const messages: { to: string[]; data: string }[] = [];
  const waiting: (() => void)[] = [];
  const lines = createInterface({ input: child.stdout! });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`smtp receiver exited with ${code}`)));
    lines.on('line', (line) => {
      const listening = /^listening (\d+)$/.exec(line);
      if (listening) return resolve(Number(listening[1]));
      messages.push(JSON.parse(line));
      for (const wake of waiting.splice(0)) wake();
    });
  });
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    async next(count: number) {
      while (messages.length < count) await new Promise<void>((resolve) => waiting.push(resolve));
      return messages[count - 1]!;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** A mail's text: headers and body, quoted-printable soft breaks and escapes undone. */
export function mailText(data: string): string {
  return data
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/** The confirmation link in the latest confirmation mail to `to`, waiting for the mail if need be. */
export async function confirmationLinkTo(smtp: Awaited<ReturnType<typeof smtpReceiver>>, to: string): Promise<string> {
  for (;;) {
    const mail = [...smtp.messages]
      .reverse()
      .find((m) => m.to.includes(to) && /Subject: Confirm alert e-mails from Palisade/.test(m.data));
    if (mail) {
      const link = /(https?:\/\/\S+\/alerts\/confirm\?token=[A-Za-z0-9_-]+)/.exec(mailText(mail.data));
      assert.ok(link, mail.data);
      return link[1]!;
    }
    await smtp.next(smtp.messages.length + 1);
  }
}

/** The recipient confirms: opens the link (the page with its button), then presses it (the form's POST). */
export async function confirmAsRecipient(t: TestApp, link: string) {
  const url = new URL(link);
  const page = await t.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
  assert.equal(page.statusCode, 200, page.body);
  const res = await t.app.inject({
    method: 'POST',
    url: url.pathname,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    payload: `token=${url.searchParams.get('token')}`,
  });
  assert.equal(res.statusCode, 200, res.body);
}

export const sample = (ts: number, disk = 40) => ({
  ts,
  cpu_pct: 10,
  mem_used_mb: 2000,
  mem_total_mb: 8000,
  disk_used_pct: disk,
  load1: 0.3,
  rx_bps: 1000,
  tx_bps: 500,
  attacks_active: 0,
  attacks_total: 0,
});

/**
 * The calls the alert tests make on one test console (`app()` is read at call time, so the helpers
 * can be made before `before()` starts it): dashboard routes with a session, channels, rules, an
 * enrolled server, its check-ins, and the alert rows of the outbox.
 */
export function alertTools(app: () => TestApp) {
  const call = (who: TestUser, method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, body?: unknown) =>
    app().app.inject({
      method,
      url,
      headers: { cookie: who.cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
    });
  const addChannel = async (who: TestUser, body: Record<string, unknown>) => {
    const res = await call(who, 'POST', '/api/alerts/channels', body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data.channel as { id: number; kind: string; target: string };
  };
  const addRule = async (who: TestUser, body: Record<string, unknown>) => {
    const res = await call(who, 'POST', '/api/alerts/rules', body);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().data.rule as { id: number } & Record<string, unknown>;
  };
  /** A server with a daemon token (for check-ins) and, when `agentUrl` is given, a sealed agent key there. */
  async function enrolled(who: TestUser, name: string, fields: { agentUrl?: string; facts?: object } = {}) {
    const t = app();
    const server = await insertTestServer(t.app, who, { name, hostname: null, public_ip: null, facts: fields.facts });
    const daemon = generateToken('daemon');
    await t.db
      .updateTable('servers')
      .set({
        daemon_token_hash: hashToken(daemon),
        ...(fields.agentUrl
          ? { api_url: fields.agentUrl, api_key_enc: t.app.secrets.seal(generateToken('agentKey')) }
          : {}),
      })
      .where('id', '=', server.id)
      .execute();
    return { id: server.id, daemon };
  }
  const checkin = async (daemon: string, body: Record<string, unknown> = {}) => {
    const t = app();
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/agent/checkin',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${daemon}` },
      payload: JSON.stringify({
        agent_version: '0.1.0',
        hostname: 'web-1',
        facts: { os: 'Debian GNU/Linux 12', cores: 2 },
        sample: sample(t.clock.now),
        ...body,
      }),
    });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data as { jobs: { kind: string; run_id: number; token: string; report_path: string }[] };
  };
  const alertRows = (accountId: number) =>
    app()
      .db.selectFrom('notifications')
      .select(['kind', 'channel_id', 'status', 'payload'])
      .where('account_id', '=', accountId)
      .where('kind', 'like', 'alert.%')
      .orderBy('id')
      .execute();
  /** The services of another console process on the same database and clock (or the same one restarted). */
  const anotherConsole = () => {
    const t = app();
    return createServices({
      db: t.db,
      config: t.config,
      clock: () => t.clock.now,
      outbound: t.app.outbound,
      secrets: t.app.secrets,
    });
  };
  /** `rounds` evaluation rounds on `count` consoles at once, each under the housekeeping lease as the job runs it. */
  const evaluateOnConsoles = async (count: number, rounds: number) => {
    const consoles = Array.from({ length: count }, anotherConsole);
    for (let round = 0; round < rounds; round += 1) {
      await Promise.all(
        consoles.map((c, i) =>
          c.housekeeping.underLease('alert-evaluation', `console-${i}`, () => c.alerts.evaluate()),
        ),
      );
    }
  };
  /**
   * Delivers what is queued, then answers the titles of the account's alerts in the outbox's order,
   * after checking that the Slack-format receiver at `path` got exactly those (deliveries run two at
   * a time per channel, so they may arrive in another order).
   */
  const deliveredTitles = async (got: Received[], path: string, accountId: number) => {
    await app().app.services.notifications.runOnce(50);
    const sent = (await alertRows(accountId)).map((r) => (JSON.parse(r.payload) as { title: string }).title);
    const arrived = got.filter((r) => r.path === path).map((r) => JSON.parse(r.body).text.split('\n')[0] as string);
    assert.deepEqual([...arrived].sort(), [...sent].sort());
    return sent;
  };
  return {
    call,
    addChannel,
    addRule,
    enrolled,
    checkin,
    alertRows,
    anotherConsole,
    evaluateOnConsoles,
    deliveredTitles,
  };
}
