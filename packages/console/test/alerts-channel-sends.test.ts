// What "send a test" and e-mail channels let one account make the console send:
// e-mail recipients confirm before they get anything but one confirmation mail, tests are limited
// per channel and per account, and a failed test does not tell a closed port from a silent one.
import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { alertTools, confirmationLinkTo, mailText, receiver, smtpReceiver } from './alerts-support.js';
import { dialects, registerUser, type TestApp, type TestUser, testApp } from './support.js';

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: { error?: string; data?: Record<string, unknown> };
}

for (const dialect of dialects()) {
  describe(`alert channel sends (${dialect})`, () => {
    let t: TestApp;
    let base = '';
    let hooks: Awaited<ReturnType<typeof receiver>>;
    let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
    before(async () => {
      smtp = await smtpReceiver();
      hooks = await receiver();
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1', PALISADE_SMTP_URL: smtp.url });
      await t.app.listen({ host: '127.0.0.1', port: 0 });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    });
    after(async () => {
      await t.app.services.notifications.settle();
      await t.close();
      await hooks.close();
      await smtp.stop();
    });

    const { addRule, enrolled, checkin, alertRows } = alertTools(() => t);

    /** One request to the listening console over a real socket. */
    async function send(method: string, path: string, who?: TestUser, body?: unknown, type = 'application/json') {
      const res = await fetch(base + path, {
        method,
        headers: {
          ...(who ? { cookie: who.cookie } : {}),
          ...(body !== undefined ? { 'content-type': type } : {}),
        },
        ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
      });
      const text = await res.text();
      let json = {};
      try {
        json = JSON.parse(text);
      } catch {}
      return { status: res.status, headers: res.headers, text, json } as Answer;
    }
    const channelOf = (a: Answer) =>
      a.json.data!.channel as { id: number; confirmed: boolean; last_error: string | null };

    test('an e-mail channel gets one confirmation mail without the account’s words; nothing else until the recipient confirms; the token works once', async () => {
      const user = await registerUser(t.app, '127.0.0.1');
      const created = await send('POST', '/api/alerts/channels', user, {
        name: 'BUY CHEAP <b>pills</b> now',
        kind: 'email',
        email: 'victim@example.com',
      });
      assert.equal(created.status, 201, created.text);
      const mail = channelOf(created);
      assert.equal(mail.confirmed, false);
      const link = await confirmationLinkTo(smtp, 'victim@example.com');
      const toVictim = () => smtp.messages.filter((m) => m.to.includes('victim@example.com'));
      assert.equal(toVictim().length, 1);
      const text = mailText(toVictim()[0]!.data);
      assert.match(text, /Subject: Confirm alert e-mails from Palisade/);
      assert.doesNotMatch(text, /BUY CHEAP|pills/, 'no text of the account before confirmation');
      assert.ok(!text.includes(user.email), 'not even its e-mail address');
      const token = new URL(link).searchParams.get('token')!;
      const row = await t.db
        .selectFrom('alert_channels')
        .selectAll()
        .where('id', '=', mail.id)
        .executeTakeFirstOrThrow();
      assert.ok(row.confirm_token_hash && !JSON.stringify(row).includes(token), 'only the hash of the token is kept');

      // No test until confirmed (the answer says why), and no alert.
      const early = await send('POST', `/api/alerts/channels/${mail.id}/test`, user);
      assert.equal(early.status, 409);
      assert.match(early.json.error!, /^channel: waiting for confirmation/);
      const chat = channelOf(
        await send('POST', '/api/alerts/channels', user, { name: 'chat', kind: 'slack', url: `${hooks.base}/chat` }),
      );
      assert.equal(chat.confirmed, true, 'a chat channel needs no confirmation');
      const server = await enrolled(user, 'web-9');
      await checkin(server.daemon);
      await addRule(user, { name: 'down', kind: 'offline', server_ids: [server.id], channel_ids: [mail.id, chat.id] });
      t.clock.advance(10 * 60_000);
      await t.app.services.alerts.evaluate();
      const rows = await alertRows(user.id);
      assert.deepEqual(
        rows.map((r) => r.channel_id),
        [chat.id],
        'the alert went to the chat channel alone',
      );
      await t.app.services.notifications.runOnce(50);
      assert.equal(toVictim().length, 1, 'still only the confirmation mail');

      // Opening the link shows a button and confirms nothing (a mail scanner fetching it changes nothing).
      const opened = await fetch(link);
      const page = await opened.text();
      assert.equal(opened.status, 200);
      assert.equal(opened.headers.get('referrer-policy'), 'no-referrer');
      assert.match(page, /<form method="post" action="\/alerts\/confirm">/);
      assert.match(page, /victim@example\.com/);
      const listed = (await send('GET', '/api/alerts/channels', user)).json.data!.channels as Array<{
        id: number;
        confirmed: boolean;
      }>;
      assert.equal(listed.find((c) => c.id === mail.id)!.confirmed, false);

      // Pressing it confirms, without a session; the token works once.
      const confirmed = await send(
        'POST',
        '/alerts/confirm',
        undefined,
        `token=${token}`,
        'application/x-www-form-urlencoded',
      );
      assert.equal(confirmed.status, 200, confirmed.text);
      assert.match(confirmed.text, /Alert e-mails confirmed/);
      const again = await send(
        'POST',
        '/alerts/confirm',
        undefined,
        `token=${token}`,
        'application/x-www-form-urlencoded',
      );
      assert.equal(again.status, 400);
      assert.match(again.text, /token: unknown, expired or already used/);
      const reopened = await fetch(link);
      assert.equal(reopened.status, 400);
      await reopened.text();
      const forged = await send('POST', '/alerts/confirm', undefined, { token: 'A'.repeat(43) });
      assert.equal(forged.status, 400);

      // Now tests reach it; asking for another confirmation is a 409.
      const tested = await send('POST', `/api/alerts/channels/${mail.id}/test`, user);
      assert.equal(tested.status, 200, tested.text);
      assert.equal((tested.json.data as { delivered: boolean }).delivered, true);
      while (toVictim().length < 2) await smtp.next(smtp.messages.length + 1);
      assert.equal(toVictim().length, 2);
      assert.equal((await send('POST', `/api/alerts/channels/${mail.id}/confirmation`, user)).status, 409);
    });

    test('a resent confirmation mail replaces the link; sends are limited per channel', async () => {
      const user = await registerUser(t.app, '127.0.0.1');
      const mail = channelOf(
        await send('POST', '/api/alerts/channels', user, { name: 'm', kind: 'email', email: 'resend@example.com' }),
      );
      assert.equal(mail.confirmed, false);
      const first = await confirmationLinkTo(smtp, 'resend@example.com');
      const mails = smtp.messages.length;
      const resent = await send('POST', `/api/alerts/channels/${mail.id}/confirmation`, user);
      assert.equal(resent.status, 200, resent.text);
      await smtp.next(mails + 1);
      assert.notEqual(await confirmationLinkTo(smtp, 'resend@example.com'), first, 'a new link');
      const old = await send(
        'POST',
        '/alerts/confirm',
        undefined,
        `token=${new URL(first).searchParams.get('token')}`,
        'application/x-www-form-urlencoded',
      );
      assert.equal(old.status, 400, 'the earlier link stopped working');
      const statuses: number[] = [];
      for (let i = 0; i < 5; i += 1)
        statuses.push((await send('POST', `/api/alerts/channels/${mail.id}/confirmation`, user)).status);
      assert.deepEqual(
        statuses,
        [200, 200, 200, 200, 429],
        'five sends a minute per channel, the first resend included',
      );
    });

    test('send a test: 5 a minute per channel, 20 an hour per account, 429 with Retry-After; the receiver sees only the allowed', async () => {
      const user = await registerUser(t.app, '127.0.0.1');
      const path = `/limits-${dialect}`;
      const addChat = async (i: number) =>
        channelOf(
          await send('POST', '/api/alerts/channels', user, {
            name: `c${i}`,
            kind: 'discord',
            url: `${hooks.base}${path}`,
          }),
        );
      const first = await addChat(0);
      const answers: Answer[] = [];
      for (let i = 0; i < 7; i += 1) answers.push(await send('POST', `/api/alerts/channels/${first.id}/test`, user));
      assert.deepEqual(
        answers.map((a) => a.status),
        [200, 200, 200, 200, 200, 429, 429],
      );
      assert.match(
        answers[5]!.json.error!,
        /^channel: too many sends \(at most 5 tests .* a minute for one channel\); try again in \d+ s$/,
      );
      assert.ok(Number(answers[5]!.headers.get('retry-after')) >= 1);
      // Other channels of the account share its hourly 20.
      const statuses: number[] = [];
      for (let c = 1; c <= 4; c += 1) {
        const chat = await addChat(c);
        for (let i = 0; i < 5; i += 1)
          statuses.push((await send('POST', `/api/alerts/channels/${chat.id}/test`, user)).status);
      }
      assert.deepEqual(statuses.slice(0, 15), Array(15).fill(200));
      assert.deepEqual(statuses.slice(15), Array(5).fill(429));
      t.clock.advance(61_000);
      const later = await send('POST', `/api/alerts/channels/${first.id}/test`, user);
      assert.equal(later.status, 429, 'a minute later the channel could, the account cannot');
      assert.match(later.json.error!, /an hour for one account/);
      assert.equal(hooks.got.filter((r) => r.path === path).length, 20, 'the receiver got exactly the 20 allowed');
      // Another account is not held back by this one.
      const other = await registerUser(t.app, '127.0.0.1');
      const theirs = channelOf(
        await send('POST', '/api/alerts/channels', other, { name: 'o', kind: 'discord', url: `${hooks.base}/other` }),
      );
      assert.equal((await send('POST', `/api/alerts/channels/${theirs.id}/test`, other)).status, 200);
    });

    test('a failed test reads the same for a closed port and a dropped connection; an HTTP status only when the receiver answered', async () => {
      const user = await registerUser(t.app, '127.0.0.1');
      // A closed port: connection refused.
      const closed = await new Promise<number>((resolve) => {
        const s = net.createServer();
        s.listen(0, '127.0.0.1', () => {
          const { port } = s.address() as AddressInfo;
          s.close(() => resolve(port));
        });
      });
      // A port that accepts and drops the connection at once.
      const dropper = net.createServer((socket) => socket.destroy());
      await new Promise<void>((resolve) => dropper.listen(0, '127.0.0.1', resolve));
      // A receiver that answers 500.
      const failing = http.createServer((req, res) => {
        req.resume();
        res.writeHead(500).end();
      });
      await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
      try {
        const result = async (url: string) => {
          const channel = channelOf(
            await send('POST', '/api/alerts/channels', user, { name: 'x', kind: 'discord', url }),
          );
          const res = await send('POST', `/api/alerts/channels/${channel.id}/test`, user);
          assert.equal(res.status, 200, res.text);
          return res.json.data as { delivered: boolean; status_code: number | null; error: string | null };
        };
        const refused = await result(`http://127.0.0.1:${closed}/hook`);
        const dropped = await result(`http://127.0.0.1:${(dropper.address() as AddressInfo).port}/hook`);
        const answered = await result(`http://127.0.0.1:${(failing.address() as AddressInfo).port}/hook`);
        assert.deepEqual(
          [refused.delivered, refused.status_code, refused.error],
          [false, null, 'could not reach the endpoint: no connection or no answer'],
        );
        assert.deepEqual([dropped.status_code, dropped.error], [refused.status_code, refused.error]);
        assert.deepEqual([answered.status_code, answered.error], [500, 'the endpoint answered HTTP 500']);
        const history = (await send('GET', '/api/alerts/history', user)).json.data!.history as Array<{
          last_error: string | null;
        }>;
        assert.ok(
          history.every((h) => !/ECONNREFUSED|refused|reset|hang up/i.test(h.last_error ?? '')),
          JSON.stringify(history),
        );
      } finally {
        await new Promise((resolve) => dropper.close(resolve));
        await new Promise((resolve) => failing.close(resolve));
      }
    });
  });
}
