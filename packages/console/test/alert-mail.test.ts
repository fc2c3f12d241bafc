import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, test } from 'node:test';
import { mailText, receiver, smtpReceiver } from './alerts-support.js';
import { startConsoleProcess } from './console-process.js';
import { registeredCaller } from './http.js';
import { dialects, testDatabase } from './support.js';

/** A loopback port free right now, so the console's public URL can name it before it starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const FROM = 'Ops Alerts <alerts@ops.example.org>';

test('a bad PALISADE_SMTP_FROM stops the console at start with a message naming it', async () => {
  for (const bad of ['alerts', 'alerts@example.com\r\nBcc: victim@example.com', 'A <b@c.d>, E <f@g.h>']) {
    await assert.rejects(
      startConsoleProcess({ PALISADE_DATA_DIR: '/nonexistent/palisade-smtp-from', PALISADE_SMTP_FROM: bad }),
      (err: Error) => /PALISADE_SMTP_FROM: expected an address such as alerts@example\.com/.test(err.message),
      JSON.stringify(bad),
    );
  }
});

for (const dialect of dialects()) {
  describe(`alert e-mails and payloads from a console process (${dialect})`, () => {
    test('the e-mail has the configured From and Message-ID domain, rule, server, state, time and a working link to the server page; webhook payloads link there too; each test has its own delivery id', async () => {
      const database = await testDatabase(dialect);
      const smtp = await smtpReceiver();
      const hooks = await receiver();
      const port = await freePort();
      const publicUrl = `http://127.0.0.1:${port}`;
      const running = await startConsoleProcess({
        PALISADE_PORT: String(port),
        PALISADE_PUBLIC_URL: publicUrl,
        PALISADE_DATA_DIR: database.dataDir,
        ...(database.databaseUrl
          ? { PALISADE_DATABASE_URL: database.databaseUrl, PALISADE_DATABASE_SCHEMA: database.databaseSchema! }
          : {}),
        PALISADE_SMTP_URL: smtp.url,
        PALISADE_SMTP_FROM: FROM,
        PALISADE_ALERT_INTERVAL_S: '1',
        PALISADE_ALLOW_PRIVATE_TARGETS: '1',
        PALISADE_BOOTSTRAP_ADMIN: '0',
      });
      try {
        const { call, accountId } = await registeredCaller(running.url, {
          email: `mail-${process.pid}-${dialect}@example.com`,
          password: 'alert-mail-password',
          name: 'M',
        });
        const product = (await call('POST', '/api/products', { catalog_id: 1 })).json.data.product;
        // A server whose agent is older than the console: an `agent_outdated` rule fires on the next round.
        const server = await database.db
          .insertInto('servers')
          .values({
            account_id: accountId,
            product_id: product.id,
            name: 'edge-7',
            api_url: 'http://10.0.0.5:9100',
            api_key_enc: 'not-a-real-key',
            hostname: null,
            public_ip: null,
            facts: '{}',
            agent_version: '0.0.1',
            daemon_token_hash: null,
            last_seen: Date.now(),
            latest_sample: null,
            score_base: null,
            score_base_total: null,
            created_at: Date.now(),
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        const serverId = Number(server.id);
        const serverPage = `${publicUrl}/dashboard/servers/${serverId}`;

        assert.equal((await call('PUT', '/api/account/webhook', { url: `${hooks.base}/hook` })).status, 200);
        const webhook = (await call('POST', '/api/alerts/channels', { name: 'hook', kind: 'webhook' })).json.data
          .channel;
        const email = await call('POST', '/api/alerts/channels', {
          name: 'ops',
          kind: 'email',
          email: 'ops@example.net',
        });
        assert.equal(email.status, 201);
        // The confirmation mail already comes from the configured sender.
        const confirmation = await smtp.next(1);
        assert.equal((confirmation as { from?: string }).from, 'alerts@ops.example.org', 'envelope sender');
        assert.match(confirmation.data, /^From: Ops Alerts <alerts@ops\.example\.org>\r?$/m);
        await database.db
          .updateTable('alert_channels')
          .set({ confirmed_at: Date.now() })
          .where('id', '=', email.json.data.channel.id)
          .execute();

        // Two tests of the webhook channel: each delivery carries its own id, as queued ones do.
        for (let i = 0; i < 2; i += 1) {
          const tested = await call('POST', `/api/alerts/channels/${webhook.id}/test`);
          assert.equal(tested.status, 200);
          assert.equal(tested.json.data.delivered, true);
        }
        const ids = hooks.got.map((g) => String(g.headers['x-palisade-delivery']));
        assert.equal(ids.length, 2);
        assert.notEqual(ids[0], ids[1], 'two tests, two delivery ids');
        assert.ok(
          ids.every((id) => /^[1-9][0-9]*$/.test(id)),
          `delivery ids ${ids}`,
        );

        const rule = await call('POST', '/api/alerts/rules', {
          name: 'Old agents',
          kind: 'agent_outdated',
          channel_ids: [webhook.id, email.json.data.channel.id],
        });
        assert.equal(rule.status, 201, JSON.stringify(rule.json));

        const mail = await smtp.next(2);
        while (!hooks.got.some((g) => g.headers['x-palisade-event'] === 'alert.fired'))
          await new Promise((r) => setTimeout(r, 50));

        // The webhook payload links to the server's page.
        const fired = JSON.parse(hooks.got.find((g) => g.headers['x-palisade-event'] === 'alert.fired')!.body);
        assert.equal(fired.link, serverPage);
        assert.equal(fired.server_id, serverId);

        // The e-mail: sender and Message-ID from PALISADE_SMTP_FROM, a text part before an HTML part.
        assert.equal((mail as { from?: string }).from, 'alerts@ops.example.org');
        assert.deepEqual(mail.to, ['ops@example.net']);
        const data = mailText(mail.data);
        assert.match(data, /^From: Ops Alerts <alerts@ops\.example\.org>\r?$/m);
        assert.match(data, /^Message-ID: <[^>\s]+@ops\.example\.org>\r?$/im);
        const textAt = data.search(/Content-Type: text\/plain/i);
        const htmlAt = data.search(/Content-Type: text\/html/i);
        assert.ok(textAt > 0 && htmlAt > textAt, 'a text part, then an HTML part');
        const text = data.slice(textAt, htmlAt);
        assert.match(text, /Rule: Old agents/);
        assert.match(text, /Server: edge-7/);
        assert.match(text, /State: firing/);
        assert.match(text, /Time: \w+day,? \d{1,2} \w+ \d{4} at \d{2}:\d{2}:\d{2} UTC/);
        assert.ok(text.includes(`Open the server: ${serverPage}`), text);
        // The link works: the console serves the dashboard page there.
        const page = await fetch(serverPage);
        assert.equal(page.status, 200);
        assert.match(page.headers.get('content-type') ?? '', /text\/html/);
      } finally {
        await running.kill();
        await smtp.stop();
        await hooks.close();
        await database.close();
      }
    });
  });
}
