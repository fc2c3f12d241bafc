import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ticketNotificationSchema } from '@palisade/protocol';
import { readBody } from '@palisade/testkit';
import { dialects, joinTeam, registerUser, type TestApp, type TestUser, testApp } from './support.js';

/** A real local webhook receiver whose behaviour the test switches: ok, failing (500) or slow. */
export async function webhookReceiver() {
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  let mode: 'ok' | 'fail' | 'slow' = 'ok';
  const server = http.createServer(async (req, res) => {
    received.push({ headers: req.headers, body: await readBody(req) });
    if (mode === 'fail') return void res.writeHead(500).end('broken');
    const answer = () => res.writeHead(204).end();
    if (mode === 'slow') setTimeout(answer, 300);
    else answer();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    received,
    setMode(m: typeof mode) {
      mode = m;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

for (const dialect of dialects()) {
  describe(`tickets and ticket notifications (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    let admin: TestUser;
    let productId = 0;
    before(async () => {
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1' });
      user = await registerUser(t.app);
      admin = await registerUser(t.app);
      await t.db.updateTable('people').set({ role: 'admin' }).where('id', '=', admin.id).execute();
      productId = (await t.app.services.catalog.addProduct(user.id, 1)).id;
    });
    after(() => t.close());

    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown, who = user) =>
      t.app.inject({
        method,
        url,
        headers: { cookie: who.cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const outbox = () =>
      t.db.selectFrom('notifications').selectAll().where('account_id', '=', user.id).orderBy('id').execute();

    test('a ticket is opened, answered by an admin, closed and reopened; each activity queues a notification', async () => {
      const before = (await outbox()).length;
      const opened = await call('POST', '/api/tickets', {
        product_id: productId,
        subject: 'Disk alert',
        message: 'The disk filled up',
      });
      assert.equal(opened.statusCode, 201, opened.body);
      const ticket = opened.json().data.ticket;
      assert.equal(ticket.status, 'open');
      assert.deepEqual(
        ticket.messages.map((m: { author_role: string; body: string }) => [m.author_role, m.body]),
        [['user', 'The disk filled up']],
      );
      assert.equal((await call('GET', '/api/tickets')).json().data.tickets[0].ref, ticket.ref);

      const answered = await call(
        'POST',
        `/api/admin/tickets/${ticket.id}/messages`,
        { message: 'We are on it' },
        admin,
      );
      assert.equal(answered.statusCode, 201);
      assert.equal((await call('POST', `/api/tickets/${ticket.id}/close`, {})).json().data.ticket.status, 'closed');
      assert.equal((await call('POST', `/api/tickets/${ticket.id}/close`, {})).statusCode, 409);
      assert.equal(
        (await call('POST', `/api/admin/tickets/${ticket.id}/reopen`, {}, admin)).json().data.ticket.status,
        'open',
      );
      const detail = (await call('GET', `/api/tickets/${ticket.id}`)).json().data.ticket;
      assert.deepEqual(
        detail.messages.map((m: { author_role: string }) => m.author_role),
        ['user', 'admin'],
      );

      const queued = (await outbox()).slice(before);
      assert.deepEqual(
        queued.map((n) => n.kind),
        ['ticket.created', 'ticket.reply', 'ticket.closed', 'ticket.reopened'],
      );
      for (const n of queued) {
        const payload = JSON.parse(n.payload);
        assert.deepEqual(Object.keys(payload).sort(), ['body', 'kind', 'ticket_ref', 'title']);
        for (const value of Object.values(payload)) assert.equal(typeof value, 'string');
        assert.equal(payload.ticket_ref, ticket.ref);
      }

      // The admins' view of the same thread, and an admin closing it.
      const seen = await call('GET', `/api/admin/tickets/${ticket.id}`, undefined, admin);
      assert.deepEqual(seen.json().data.ticket, detail);
      const closed = await call('POST', `/api/admin/tickets/${ticket.id}/close`, {}, admin);
      assert.equal(closed.json().data.ticket.status, 'closed');
    });

    test('each message names the person who wrote it; one from before authors were kept names the team', async () => {
      await t.db.updateTable('accounts').set({ name: 'Acme' }).where('id', '=', user.id).execute();
      await t.db.updateTable('people').set({ name: 'Sam Support' }).where('id', '=', admin.id).execute();
      const member = await registerUser(t.app);
      await t.db.updateTable('people').set({ name: 'Mo Member' }).where('id', '=', member.id).execute();
      await joinTeam(t, user.id, member, 'operator');
      const ticket = (
        await call('POST', '/api/tickets', {
          product_id: productId,
          subject: 'Who wrote it',
          message: 'from the owner',
        })
      ).json().data.ticket;
      const byMember = await t.app.inject({
        method: 'POST',
        url: `/api/tickets/${ticket.id}/messages`,
        headers: { cookie: member.cookie, 'x-palisade-team': String(user.id), 'content-type': 'application/json' },
        payload: JSON.stringify({ message: 'from a member' }),
      });
      assert.equal(byMember.statusCode, 201, byMember.body);
      await call('POST', `/api/admin/tickets/${ticket.id}/messages`, { message: 'from support' }, admin);
      // A row as the release before migration 0030 writes it: the team, no person.
      await t.db
        .insertInto('ticket_messages')
        .values({ ticket_id: ticket.id, author_id: user.id, author_role: 'user', body: 'from before', created_at: 1 })
        .execute();
      const thread = async () =>
        (await call('GET', `/api/tickets/${ticket.id}`))
          .json()
          .data.ticket.messages.map((m: { author_person_id: number | null; author_name: string; body: string }) => [
            m.author_person_id,
            m.author_name,
            m.body,
          ]);
      assert.deepEqual(await thread(), [
        [user.id, 'Test User', 'from the owner'],
        [member.id, 'Mo Member', 'from a member'],
        [admin.id, 'Sam Support', 'from support'],
        [null, 'Acme', 'from before'],
      ]);
      // A member who closes their account: what they wrote stays, under the team's name.
      const closed = await t.app.inject({
        method: 'DELETE',
        url: '/api/account',
        headers: { cookie: member.cookie, 'content-type': 'application/json' },
        payload: JSON.stringify({ password: member.password }),
      });
      assert.equal(closed.statusCode, 200, closed.body);
      assert.deepEqual((await thread())[1], [null, 'Acme', 'from a member']);
    });

    test('tickets are validated, private to their account, and admin routes need an admin', async () => {
      const cases: [unknown, RegExp][] = [
        [{ subject: 's', message: 'm' }, /^product_id: is required/],
        [{ product_id: 999_999, subject: 's', message: 'm' }, /^product_id: no product with this id/],
        [{ product_id: productId, subject: '', message: 'm' }, /^subject: must not be empty/],
        [{ product_id: productId, subject: 'x'.repeat(201), message: 'm' }, /^subject: at most 200/],
        [{ product_id: productId, subject: 's', message: 'x'.repeat(10_001) }, /^message: at most 10000/],
      ];
      for (const [body, message] of cases) {
        const res = await call('POST', '/api/tickets', body);
        assert.equal(res.statusCode, 400, JSON.stringify(body).slice(0, 50));
        assert.match(res.json().error, message);
      }
      const other = await registerUser(t.app);
      const otherProduct = (await t.app.services.catalog.addProduct(other.id, 1)).id;
      assert.equal(
        (await call('POST', '/api/tickets', { product_id: otherProduct, subject: 's', message: 'm' })).statusCode,
        400,
        "another account's product",
      );
      const mine = (
        await call('POST', '/api/tickets', { product_id: productId, subject: 'private', message: 'm' })
      ).json().data.ticket;
      for (const url of [`/api/tickets/${mine.id}`, '/api/tickets/abc', '/api/tickets/99999']) {
        assert.equal((await call('GET', url, undefined, other)).statusCode, 404);
      }
      assert.equal((await call('POST', `/api/tickets/${mine.id}/messages`, { message: 'hi' }, other)).statusCode, 404);
      assert.equal((await call('GET', '/api/admin/tickets', undefined, user)).statusCode, 403);
      const all = (await call('GET', '/api/admin/tickets?status=open', undefined, admin)).json().data.tickets;
      assert.ok(
        all.some((x: { id: number; account_email: string }) => x.id === mine.id && x.account_email === user.email),
      );
      assert.equal((await call('GET', '/api/admin/tickets?status=maybe', undefined, admin)).statusCode, 400);
    });

    test('the webhook URL is checked by the target policy and gets a signing secret', async () => {
      for (const url of [
        'http://169.254.169.254/latest',
        'ftp://example.com/x',
        'not a url',
        'http://[::ffff:169.254.169.254]/',
      ]) {
        const res = await call('PUT', '/api/account/webhook', { url });
        assert.equal(res.statusCode, 400, url);
        assert.match(res.json().error, /^url: /);
      }
      const strict = await testApp(dialect); // private targets not allowed
      try {
        const u = await registerUser(strict.app);
        const res = await strict.app.inject({
          method: 'PUT',
          url: '/api/account/webhook',
          headers: { cookie: u.cookie, 'content-type': 'application/json' },
          payload: JSON.stringify({ url: 'http://127.0.0.1:9/hook' }),
        });
        assert.equal(res.statusCode, 400);
        assert.match(res.json().error, /^url: .*loopback.*PALISADE_ALLOW_PRIVATE_TARGETS/);
      } finally {
        await strict.close();
      }
    });

    test('notifications are delivered signed, retried with back-off while the receiver is down or failing, and logged', async () => {
      const receiver = await webhookReceiver();
      try {
        const set = await call('PUT', '/api/account/webhook', { url: receiver.url });
        assert.equal(set.statusCode, 200, set.body);
        const { secret } = set.json().data;
        assert.match(secret, /^whsec_/);
        assert.equal(
          (await call('PUT', '/api/account/webhook', { url: receiver.url })).json().data.secret,
          secret,
          'the secret stays',
        );

        // Up: everything queued so far is delivered once, signed.
        await t.app.services.notifications.runOnce(100);
        const firstBatch = receiver.received.length;
        assert.ok(firstBatch >= 4);
        for (const delivery of receiver.received) {
          const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(delivery.headers['x-palisade-signature']));
          assert.ok(match, 'signature header');
          const expected = createHmac('sha256', secret).update(`${match[1]}.${delivery.body}`).digest('hex');
          assert.equal(match[2], expected);
          assert.match(String(delivery.headers['x-palisade-delivery']), /^\d+$/);
          assert.equal(delivery.headers['content-type'], 'application/json');
          // The body is what the published schema says (packages/protocol/src/webhooks.ts).
          const body = ticketNotificationSchema.parse(JSON.parse(delivery.body));
          assert.equal(delivery.headers['x-palisade-event'], body.kind);
        }
        assert.equal((await outbox()).filter((n) => n.status !== 'delivered').length, 0);

        // Failing: 500s are retried with growing waits.
        receiver.setMode('fail');
        await call('POST', '/api/tickets', { product_id: productId, subject: 'retry me', message: 'm' });
        await t.app.services.notifications.runOnce();
        let row = (await outbox()).at(-1)!;
        assert.equal(row.status, 'queued');
        assert.equal(row.attempts, 1);
        assert.equal(row.next_attempt_at - t.clock.now, 10_000);
        await t.app.services.notifications.runOnce();
        assert.equal((await outbox()).at(-1)!.attempts, 1, 'not due yet');
        t.clock.advance(10_000);
        await t.app.services.notifications.runOnce();
        row = (await outbox()).at(-1)!;
        assert.equal(row.attempts, 2);
        assert.equal(row.next_attempt_at - t.clock.now, 20_000, 'the wait doubles');

        // Down: the attempt says the endpoint could not be reached.
        await receiver.close();
        t.clock.advance(20_000);
        await t.app.services.notifications.runOnce();
        // Slow but answering: delivered.
        const again = await webhookReceiver();
        await call('PUT', '/api/account/webhook', { url: again.url });
        again.setMode('slow');
        t.clock.advance(40_000);
        await t.app.services.notifications.runOnce();
        assert.equal((await outbox()).at(-1)!.status, 'delivered');
        assert.equal(again.received.length, 1);
        await again.close();

        const log = (await call('GET', '/api/account/webhook')).json().data;
        assert.equal(log.url, again.url);
        assert.ok(!JSON.stringify(log).includes(secret), 'the secret is shown only when set');
        const errors = log.deliveries.map(
          (d: { error: string | null; response_status: number | null }) => d.error ?? String(d.response_status),
        );
        assert.ok(errors.includes('the endpoint answered HTTP 500'));
        assert.ok(
          errors.some((e: string) => e.startsWith('could not reach the endpoint: ')),
          JSON.stringify(errors),
        );
      } finally {
        await receiver.close().catch(() => {});
      }
    });

    test('a notification that cannot be delivered for 26 hours is given up', async () => {
      const receiver = await webhookReceiver();
      receiver.setMode('fail');
      await call('PUT', '/api/account/webhook', { url: receiver.url });
      await call('POST', '/api/tickets', { product_id: productId, subject: 'doomed', message: 'm' });
      for (let i = 0; i < 40 && (await outbox()).at(-1)!.status === 'queued'; i += 1) {
        await t.app.services.notifications.runOnce();
        t.clock.advance(3600_000);
      }
      assert.equal((await outbox()).at(-1)!.status, 'failed');
      assert.ok((await outbox()).at(-1)!.attempts >= 26);
      await receiver.close();
      assert.equal((await call('DELETE', '/api/account/webhook')).statusCode, 200);
      assert.equal((await call('DELETE', '/api/account/webhook')).statusCode, 404);
    });
  });
}
