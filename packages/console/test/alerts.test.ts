import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import {
  alertTools,
  confirmAsRecipient,
  confirmationLinkTo,
  receiver,
  sample,
  smtpReceiver,
} from './alerts-support.js';
import { dialects, insertTestServer, registerUser, type TestApp, type TestUser, testApp } from './support.js';

for (const dialect of dialects()) {
  describe(`alerts (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    let hooks: Awaited<ReturnType<typeof receiver>>;
    let smtp: Awaited<ReturnType<typeof smtpReceiver>>;
    before(async () => {
      smtp = await smtpReceiver();
      hooks = await receiver();
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1', PALISADE_SMTP_URL: smtp.url });
      owner = await registerUser(t.app);
    });
    after(async () => {
      await t.app.services.notifications.settle();
      await t.close();
      await hooks.close();
      await smtp.stop();
    });

    const {
      call,
      addChannel,
      addRule,
      enrolled,
      checkin,
      alertRows,
      anotherConsole,
      evaluateOnConsoles,
      deliveredTitles,
    } = alertTools(() => t);

    test('rules and channels: created, listed, changed, removed; bad input is a 400 naming the field', async () => {
      const user = await registerUser(t.app);
      const other = await registerUser(t.app);
      const server = await insertTestServer(t.app, user, { name: 'db-1' });
      const channel = await addChannel(user, { name: 'ops', kind: 'slack', url: `${hooks.base}/slack` });
      assert.equal(channel.target, new URL(hooks.base).host, 'the settings page sees the host, never the URL');

      const bad: [Record<string, unknown>, RegExp][] = [
        [{ name: 'x', kind: 'metric', metric: 'gpu', threshold: 5, channel_ids: [channel.id] }, /^metric: /],
        [
          { name: 'x', kind: 'metric', metric: 'disk', threshold: 120, channel_ids: [channel.id] },
          /^threshold: expected 0 to 100/,
        ],
        [{ name: 'x', kind: 'metric', metric: 'load', threshold: -1, channel_ids: [channel.id] }, /^threshold: /],
        [{ name: 'x', kind: 'metric', metric: 'cpu', channel_ids: [channel.id] }, /^threshold: is required/],
        [{ name: 'x', kind: 'metric', threshold: 50, channel_ids: [channel.id] }, /^metric: is required/],
        [{ name: 'x', kind: 'score', threshold: 5000, channel_ids: [channel.id] }, /^threshold: expected 1 to 1000/],
        [{ name: 'x', kind: 'reboot', channel_ids: [channel.id] }, /^kind: /],
        [{ name: 'x', kind: 'offline', channel_ids: [] }, /^channel_ids: /],
        [{ name: 'x', kind: 'offline', channel_ids: [channel.id], minutes: 99999 }, /^minutes: /],
        [{ name: 'x', kind: 'offline', channel_ids: [channel.id], repeat_minutes: 1.5 }, /^repeat_minutes: /],
        [{ name: '', kind: 'offline', channel_ids: [channel.id] }, /^name: /],
        [{ name: 'x', kind: 'offline', channel_ids: [channel.id], colour: 'red' }, /unknown field colour/],
        [{ name: 'x', kind: 'offline', channel_ids: [999_999] }, /^channel_ids: no channel 999999/],
        [
          { name: 'x', kind: 'offline', channel_ids: [channel.id], server_ids: [999_999] },
          /^server_ids: no server 999999/,
        ],
      ];
      for (const [body, message] of bad) {
        const res = await call(user, 'POST', '/api/alerts/rules', body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)} → ${res.body}`);
        assert.match(res.json().error, message, JSON.stringify(body));
      }
      const badChannels: [Record<string, unknown>, RegExp][] = [
        [{ name: 'x', kind: 'pager' }, /^kind: /],
        [{ name: 'x', kind: 'slack' }, /^url: is required/],
        [{ name: 'x', kind: 'discord', url: 'http://169.254.169.254/latest' }, /^url: .*metadata/],
        [{ name: 'x', kind: 'slack', url: 'ftp://example.com/x' }, /^url: /],
        [{ name: 'x', kind: 'email' }, /^email: is required/],
        [{ name: 'x', kind: 'email', email: 'not an address' }, /^email: /],
      ];
      for (const [body, message] of badChannels) {
        const res = await call(user, 'POST', '/api/alerts/channels', body);
        assert.equal(res.statusCode, 400, `${JSON.stringify(body)} → ${res.body}`);
        assert.match(res.json().error, message, JSON.stringify(body));
      }

      const rule = await addRule(user, {
        name: 'disk',
        kind: 'metric',
        metric: 'disk',
        threshold: 90,
        minutes: 5,
        server_ids: [server.id],
        channel_ids: [channel.id],
      });
      const listed = (await call(user, 'GET', '/api/alerts/rules')).json().data.rules;
      assert.deepEqual(
        listed.map((r: Record<string, unknown>) => [r.name, r.kind, r.metric, r.threshold, r.minutes, r.server_ids]),
        [['disk', 'metric', 'disk', 90, 5, [server.id]]],
      );
      const changed = await call(user, 'PUT', `/api/alerts/rules/${rule.id}`, {
        name: 'score',
        kind: 'score',
        threshold: 700,
        channel_ids: [channel.id],
      });
      assert.equal(changed.statusCode, 200, changed.body);
      assert.equal(changed.json().data.rule.metric, null);
      assert.equal(changed.json().data.rule.server_ids, null, 'no server_ids: the whole fleet');
      assert.equal(
        (
          await call(other, 'PUT', `/api/alerts/rules/${rule.id}`, {
            name: 'x',
            kind: 'offline',
            channel_ids: [channel.id],
          })
        ).statusCode,
        404,
        "another account's rule is 404, like a missing one",
      );
      assert.equal((await call(other, 'DELETE', `/api/alerts/rules/${rule.id}`)).statusCode, 404);
      assert.equal((await call(other, 'POST', `/api/alerts/channels/${channel.id}/test`)).statusCode, 404);
      assert.equal((await call(user, 'DELETE', `/api/alerts/rules/${rule.id}`)).statusCode, 200);
      assert.equal((await call(user, 'DELETE', `/api/alerts/rules/${rule.id}`)).statusCode, 404);
      assert.equal((await call(user, 'DELETE', `/api/alerts/channels/${channel.id}`)).statusCode, 200);
      assert.deepEqual((await call(user, 'GET', '/api/alerts/channels')).json().data.channels, []);
    });

    test('send a test: Slack {text}, Discord {content}, the signed webhook, e-mail through a real SMTP server; a failing channel is marked', async () => {
      const user = await registerUser(t.app);
      assert.equal((await call(user, 'PUT', '/api/account/webhook', { url: `${hooks.base}/signed` })).statusCode, 200);
      const slack = await addChannel(user, { name: 'slack', kind: 'slack', url: `${hooks.base}/slack-test` });
      const discord = await addChannel(user, { name: 'discord', kind: 'discord', url: `${hooks.base}/discord-test` });
      const webhook = await addChannel(user, { name: 'signed', kind: 'webhook' });
      const mail = await addChannel(user, { name: 'mail', kind: 'email', email: 'ops@example.com' });
      await confirmAsRecipient(t, await confirmationLinkTo(smtp, 'ops@example.com'));
      const confirmations = smtp.messages.length;
      for (const channel of [slack, discord, webhook, mail]) {
        const res = await call(user, 'POST', `/api/alerts/channels/${channel.id}/test`);
        assert.equal(res.statusCode, 200, res.body);
        assert.equal(res.json().data.delivered, true, `${channel.kind}: ${res.body}`);
      }
      const slackBody = JSON.parse(hooks.got.find((r) => r.path === '/slack-test')!.body);
      assert.deepEqual(Object.keys(slackBody), ['text']);
      assert.match(slackBody.text, /Palisade test notification/);
      const discordBody = JSON.parse(hooks.got.find((r) => r.path === '/discord-test')!.body);
      assert.deepEqual(Object.keys(discordBody), ['content']);
      const signed = hooks.got.find((r) => r.path === '/signed')!;
      assert.equal(signed.headers['x-palisade-event'], 'alert.test');
      assert.match(String(signed.headers['x-palisade-signature']), /^t=\d+,v1=[0-9a-f]{64}$/);
      const message = await smtp.next(confirmations + 1);
      assert.deepEqual(message.to, ['ops@example.com']);
      assert.match(message.data, /Subject: Palisade test notification for mail/);

      const dead = await addChannel(user, { name: 'dead', kind: 'discord', url: 'http://127.0.0.1:9/gone' });
      for (let i = 0; i < 3; i += 1) {
        const res = await call(user, 'POST', `/api/alerts/channels/${dead.id}/test`);
        assert.equal(res.json().data.delivered, false);
        assert.match(res.json().data.error, /could not reach/);
      }
      const listed = (await call(user, 'GET', '/api/alerts/channels')).json().data.channels;
      const deadView = listed.find((c: { id: number }) => c.id === dead.id);
      assert.equal(deadView.failing, true);
      assert.match(deadView.last_error, /could not reach/);
      assert.equal(listed.find((c: { id: number }) => c.id === slack.id).failing, false);
      const history = (await call(user, 'GET', '/api/alerts/history')).json().data.history;
      assert.deepEqual(
        history.map((h: { kind: string; channel: string; status: string }) => `${h.channel} ${h.status}`).reverse(),
        [
          'slack delivered',
          'discord delivered',
          'account webhook delivered',
          'mail delivered',
          'dead failed',
          'dead failed',
          'dead failed',
        ],
      );
      assert.match(history[0].last_error, /could not reach/);
    });

    test('offline fires once and back online once, on every channel; a restarted console sends neither again', async () => {
      const hookPath = `/signed-${dialect}-offline`;
      assert.equal(
        (await call(owner, 'PUT', '/api/account/webhook', { url: `${hooks.base}${hookPath}` })).statusCode,
        200,
      );
      const slack = await addChannel(owner, { name: 'slack', kind: 'slack', url: `${hooks.base}/slack-offline` });
      const discord = await addChannel(owner, {
        name: 'discord',
        kind: 'discord',
        url: `${hooks.base}/discord-offline`,
      });
      const webhook = await addChannel(owner, { name: 'signed', kind: 'webhook' });
      const mail = await addChannel(owner, { name: 'mail', kind: 'email', email: 'oncall@example.com' });
      await confirmAsRecipient(t, await confirmationLinkTo(smtp, 'oncall@example.com'));
      const server = await enrolled(owner, 'web-7');
      await checkin(server.daemon);
      await addRule(owner, {
        name: 'down',
        kind: 'offline',
        server_ids: [server.id],
        channel_ids: [slack.id, discord.id, webhook.id, mail.id],
      });
      const alerts = t.app.services.alerts;
      assert.equal((await alerts.evaluate()).fired, 0, 'online: nothing');
      t.clock.advance(119_000);
      assert.equal((await alerts.evaluate()).fired, 0, 'inside the 2 minutes: nothing');
      t.clock.advance(2000);
      assert.equal((await alerts.evaluate()).fired, 1);
      for (let i = 0; i < 3; i += 1) {
        t.clock.advance(30_000);
        assert.equal((await alerts.evaluate()).fired, 0, 'one notification per incident, not per round');
      }
      // A console restarted on the same database: the state is in the database, so nothing is sent again.
      const restarted = anotherConsole();
      const queued = (await alertRows(owner.id)).length;
      assert.equal(queued, 4, 'one notification on each of the 4 channels');
      await restarted.alerts.evaluate();
      assert.equal((await alertRows(owner.id)).length, queued);
      assert.ok((await t.app.services.notifications.runOnce(50)) >= 4);

      const smtpBefore = smtp.messages.length;
      await checkin(server.daemon);
      assert.equal((await restarted.alerts.evaluate()).resolved, 1, 'back online, seen by the restarted console');
      assert.equal((await alerts.evaluate()).resolved, 0);
      assert.ok((await t.app.services.notifications.runOnce(50)) >= 4);

      const rows = await alertRows(owner.id);
      assert.deepEqual(
        rows.map((r) => [r.kind, r.channel_id, r.status]),
        [
          ['alert.fired', slack.id, 'delivered'],
          ['alert.fired', discord.id, 'delivered'],
          ['alert.fired', 0, 'delivered'],
          ['alert.fired', mail.id, 'delivered'],
          ['alert.resolved', slack.id, 'delivered'],
          ['alert.resolved', discord.id, 'delivered'],
          ['alert.resolved', 0, 'delivered'],
          ['alert.resolved', mail.id, 'delivered'],
        ],
      );
      const slackTexts = hooks.got.filter((r) => r.path === '/slack-offline').map((r) => JSON.parse(r.body).text);
      assert.equal(slackTexts.length, 2);
      assert.match(slackTexts[0], /^web-7 is offline\nNo check-in for 2 min/);
      // Times in words a reader can take in, in UTC, not ISO's T…Z.
      assert.match(slackTexts[0], /\(last at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC\)/);
      assert.match(slackTexts[1], /^web-7 is back online/);
      const discordTexts = hooks.got
        .filter((r) => r.path === '/discord-offline')
        .map((r) => JSON.parse(r.body).content);
      assert.deepEqual(
        discordTexts.map((c) => c.split('\n')[0]),
        ['web-7 is offline', 'web-7 is back online'],
      );
      const signed = hooks.got.filter((r) => r.path === hookPath);
      assert.deepEqual(
        signed.map((r) => r.headers['x-palisade-event']),
        ['alert.fired', 'alert.resolved'],
      );
      const secret = (await call(owner, 'PUT', '/api/account/webhook', { url: `${hooks.base}${hookPath}` })).json().data
        .secret;
      for (const r of signed) {
        const [, ts, v1] = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(r.headers['x-palisade-signature']))!;
        assert.equal(v1, createHmac('sha256', secret).update(`${ts}.${r.body}`).digest('hex'));
        const body = JSON.parse(r.body);
        assert.equal(body.server_id, server.id);
        assert.equal(body.rule, 'down');
      }
      const mails = await smtp.next(smtpBefore + 1);
      assert.deepEqual(mails.to, ['oncall@example.com']);
      assert.match(smtp.messages.map((m) => m.data).join('\n'), /Subject: web-7 is back online/);

      const history = (await call(owner, 'GET', '/api/alerts/history')).json().data.history;
      assert.equal(history.length, 8);
      assert.deepEqual(
        new Set(history.map((h: { channel: string }) => h.channel)),
        new Set(['slack', 'discord', 'account webhook', 'mail']),
      );
      assert.ok(history.every((h: { status: string }) => h.status === 'delivered'));
    });

    test('a server whose agent never checked in is offline 10 minutes after it was added, back at its first check-in', async () => {
      const user = await registerUser(t.app);
      const slack = await addChannel(user, { name: 'slack', kind: 'slack', url: `${hooks.base}/slack-never` });
      const server = await enrolled(user, 'never-1');
      await addRule(user, { name: 'down', kind: 'offline', server_ids: [server.id], channel_ids: [slack.id] });
      const alerts = t.app.services.alerts;
      // Counted on this account: the other tests' servers fall silent too as the clock moves.
      const sent = async () => (await alertRows(user.id)).map((r) => r.kind);
      t.clock.advance(9 * 60_000);
      await alerts.evaluate();
      assert.deepEqual(await sent(), [], 'nine minutes to install the agent: nothing');
      t.clock.advance(61_000);
      await alerts.evaluate();
      assert.deepEqual(await sent(), ['alert.fired']);
      t.clock.advance(60_000);
      await alerts.evaluate();
      assert.deepEqual(await sent(), ['alert.fired'], 'once per incident');
      await checkin(server.daemon);
      await alerts.evaluate();
      assert.deepEqual(await sent(), ['alert.fired', 'alert.resolved']);
      await t.app.services.notifications.runOnce(50);
      const texts = hooks.got.filter((r) => r.path === '/slack-never').map((r) => JSON.parse(r.body).text);
      assert.match(texts[0], /^never-1 is offline: its agent has never checked in\nAdded 10 min ago \(at .* UTC\)/);
      assert.match(texts[1], /^never-1 is back online/);
    });

    test('a disk rule fires from real check-ins once the samples stay above the threshold for its minutes', async () => {
      const user = await registerUser(t.app);
      const slack = await addChannel(user, { name: 'slack', kind: 'slack', url: `${hooks.base}/slack-disk` });
      const server = await enrolled(user, 'files-1');
      await addRule(user, {
        name: 'disk',
        kind: 'metric',
        metric: 'disk',
        threshold: 90,
        minutes: 2,
        channel_ids: [slack.id],
      });
      const diskCheckin = (disk: number) => checkin(server.daemon, { sample: sample(t.clock.now, disk) });
      const evaluate = async () => {
        await t.app.services.alerts.evaluate();
        return (await alertRows(user.id)).map((r) => r.kind);
      };
      await diskCheckin(50);
      assert.deepEqual(await evaluate(), []);
      for (let i = 0; i < 4; i += 1) {
        t.clock.advance(30_000);
        await diskCheckin(95);
        assert.deepEqual(await evaluate(), [], `above for ${(i * 30) / 60} min: not yet`);
      }
      t.clock.advance(30_000);
      await diskCheckin(96);
      assert.deepEqual(await evaluate(), ['alert.fired'], 'above for 2 minutes');
      t.clock.advance(30_000);
      await diskCheckin(97);
      assert.deepEqual(await evaluate(), ['alert.fired']);
      t.clock.advance(30_000);
      await diskCheckin(60);
      assert.deepEqual(await evaluate(), ['alert.fired', 'alert.resolved']);
      assert.deepEqual(await deliveredTitles(hooks.got, '/slack-disk', user.id), [
        'files-1: disk at 96%',
        'files-1: disk back to 60%',
      ]);
    });

    test('an attack reported in check-ins fires and ends; repeats for a long incident; a muted server sends nothing until the mute ends', async () => {
      const user = await registerUser(t.app);
      const slack = await addChannel(user, { name: 'slack', kind: 'slack', url: `${hooks.base}/slack-attack` });
      const server = await enrolled(user, 'edge-1');
      await addRule(user, { name: 'attack', kind: 'attack', repeat_minutes: 10, channel_ids: [slack.id] });
      const attacked = (active: number) =>
        checkin(server.daemon, { sample: { ...sample(t.clock.now), attacks_active: active } });
      const evaluate = async () => {
        await t.app.services.alerts.evaluate();
        return (await alertRows(user.id)).map((r) => r.kind.replace('alert.', ''));
      };
      await attacked(0);
      assert.deepEqual(await evaluate(), []);
      await attacked(2);
      assert.deepEqual(await evaluate(), ['fired']);
      t.clock.advance(9 * 60_000);
      await attacked(2);
      assert.deepEqual(await evaluate(), ['fired']);
      t.clock.advance(60_000);
      await attacked(3);
      assert.deepEqual(await evaluate(), ['fired', 'repeat'], 'still going after 10 minutes: one repeat');
      await attacked(0);
      assert.deepEqual(await evaluate(), ['fired', 'repeat', 'resolved']);

      const until = t.clock.now + 30 * 60_000;
      assert.equal((await call(user, 'PUT', `/api/alerts/mutes/${server.id}`, { until })).statusCode, 200);
      assert.equal((await call(user, 'PUT', `/api/alerts/mutes/${server.id}`, { until: 5 })).statusCode, 400);
      await attacked(1);
      assert.deepEqual(await evaluate(), ['fired', 'repeat', 'resolved'], 'muted');
      t.clock.advance(31 * 60_000);
      await attacked(1);
      assert.deepEqual(
        await evaluate(),
        ['fired', 'repeat', 'resolved', 'fired'],
        'the mute ended while the attack goes on: sent once',
      );
      assert.deepEqual(await evaluate(), ['fired', 'repeat', 'resolved', 'fired']);
      assert.deepEqual(await deliveredTitles(hooks.got, '/slack-attack', user.id), [
        'edge-1 is under attack',
        'Still: edge-1 is under attack',
        'The attack on edge-1 ended',
        'edge-1 is under attack',
      ]);
    });

    test("channels on one host do not share delivery slots: a hanging channel does not hold another account's", async () => {
      const open: http.ServerResponse[] = [];
      const arrived: string[] = [];
      const host = http.createServer((req, res) => {
        req.resume();
        if (req.url === '/hang') {
          open.push(res);
          return;
        }
        req.on('end', () => {
          arrived.push(req.url ?? '');
          res.writeHead(204).end();
        });
      });
      await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
      try {
        const stuck = await registerUser(t.app);
        const fine = await registerUser(t.app);
        const hanging = await addChannel(stuck, { name: 'hang', kind: 'slack', url: `${base}/hang` });
        const working = await addChannel(fine, { name: 'ok', kind: 'slack', url: `${base}/ok` });
        const alert = (title: string) => ({
          kind: 'alert.fired' as const,
          title,
          body: '',
          rule_id: null,
          rule: null,
          server_id: null,
          server: null,
          value: null,
          at: t.clock.now,
        });
        for (let i = 0; i < 3; i += 1) {
          await t.app.services.notifications.enqueueAlerts(t.db, [
            { accountId: stuck.id, channelId: hanging.id, notification: alert(`hang ${i}`) },
          ]);
        }
        await t.app.services.notifications.pump((err) => assert.fail(String(err)));
        while (open.length < 2) await new Promise((r) => setTimeout(r, 20));
        await t.app.services.notifications.enqueueAlerts(t.db, [
          { accountId: fine.id, channelId: working.id, notification: alert('ok') },
        ]);
        await t.app.services.notifications.pump((err) => assert.fail(String(err)));
        while (arrived.length < 1) await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(arrived, ['/ok']);
        assert.equal(open.length, 2, 'the hanging channel holds its own 2 slots only');
      } finally {
        for (const res of open) res.destroy();
        host.closeAllConnections();
        await new Promise((resolve) => host.close(resolve));
        await t.app.services.notifications.settle();
      }
    });

    test('two consoles evaluating under the housekeeping lease at once send each alert once', async () => {
      const user = await registerUser(t.app);
      const slack = await addChannel(user, { name: 'slack', kind: 'slack', url: `${hooks.base}/slack-twice` });
      const server = await enrolled(user, 'twice-1');
      await checkin(server.daemon);
      await addRule(user, { name: 'down', kind: 'offline', channel_ids: [slack.id] });
      t.clock.advance(3 * 60_000);
      await evaluateOnConsoles(3, 3);
      const rows = (await alertRows(user.id)).filter((r) => r.channel_id === slack.id);
      assert.deepEqual(
        rows.map((r) => r.kind),
        ['alert.fired'],
      );
    });
  });
}
