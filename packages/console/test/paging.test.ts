import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { dialects, json, registerUser, type TestApp, type TestUser, testApp } from './support.js';

interface Page {
  next_cursor: string | null;
  total: number;
  [list: string]: unknown;
}

for (const dialect of dialects()) {
  describe(`lists that page (${dialect})`, () => {
    let t: TestApp;
    let user: TestUser;
    let admin: TestUser;
    let productId: number;
    before(async () => {
      t = await testApp(dialect);
      await t.app.services.catalog.seed();
      user = await registerUser(t.app);
      admin = await registerUser(t.app);
      await t.db.updateTable('people').set({ role: 'admin' }).where('id', '=', admin.id).execute();
      productId = (await post(user, '/api/products', { catalog_id: 2 })).json().data.product.id;
    });
    after(() => t.close());

    function post(who: TestUser, url: string, body: unknown) {
      return t.app.inject({
        method: 'POST',
        url,
        ...json(body),
        headers: { ...json(body).headers, cookie: who.cookie },
      });
    }
    async function get(who: TestUser, url: string): Promise<Page> {
      const res = await t.app.inject({ method: 'GET', url, headers: { cookie: who.cookie } });
      assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
      return res.json().data;
    }
    async function openTickets(n: number, label: string) {
      const ids: number[] = [];
      for (let i = 0; i < n; i += 1) {
        // Every other ticket shares its second with the one before: ties are broken by id.
        if (i % 2 === 0) t.clock.advance(1000);
        const res = await post(user, '/api/tickets', { product_id: productId, subject: `${label} ${i}`, message: 'm' });
        assert.equal(res.statusCode, 201);
        ids.push(res.json().data.ticket.id);
      }
      return ids;
    }

    /**
     * Walks a list `limit` at a time, calling `between` after each page; the ids seen in order, and the
     * totals each page gave.
     */
    async function walk(who: TestUser, base: string, field: string, limit: number, between: () => Promise<unknown>) {
      const seen: number[] = [];
      const totals: number[] = [];
      let cursor: string | null = null;
      const sep = base.includes('?') ? '&' : '?';
      do {
        const page: Page = await get(who, `${base}${sep}limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
        const items = page[field] as { id: number }[];
        assert.ok(items.length <= limit);
        assert.ok(page.next_cursor === null || items.length === limit, 'only the last page is short');
        seen.push(...items.map((i) => i.id));
        totals.push(page.total);
        cursor = page.next_cursor;
        await between();
      } while (cursor);
      return { seen, totals };
    }

    test('tickets: a walk sees every ticket once, in order, while new tickets arrive', async () => {
      const first = await openTickets(7, 'old');
      const arrived: number[] = [];
      const { seen, totals } = await walk(user, '/api/tickets', 'tickets', 3, async () => {
        arrived.push(...(await openTickets(2, 'new')));
      });
      assert.deepEqual(seen, [...first].reverse(), 'latest activity first, none twice, none skipped');
      assert.deepEqual(totals, [7, 9, 11], 'the total counts what is there at each page');
      const all = await get(user, '/api/tickets?limit=200');
      assert.equal((all.tickets as unknown[]).length, 7 + arrived.length);
      assert.equal(all.next_cursor, null);

      // Without paging parameters: the first 50, with the same fields.
      const plain = await get(user, '/api/tickets');
      assert.deepEqual(Object.keys(plain).sort(), ['next_cursor', 'tickets', 'total']);
      assert.equal((plain.tickets as unknown[]).length, 7 + arrived.length);

      // A filter pages too, and its total is the filtered count.
      await post(user, `/api/tickets/${first[0]}/close`, {});
      await post(user, `/api/tickets/${first[1]}/close`, {});
      const closed = await walk(user, '/api/tickets?status=closed', 'tickets', 1, async () => {});
      assert.deepEqual(closed.seen, [first[1], first[0]]);
      assert.deepEqual(closed.totals, [2, 2]);

      // The admins' view pages every account's tickets the same way.
      const stranger = await registerUser(t.app);
      const theirs = (await post(stranger, '/api/products', { catalog_id: 2 })).json().data.product.id;
      await post(stranger, '/api/tickets', { product_id: theirs, subject: 'other', message: 'm' });
      const everyone = await walk(admin, '/api/admin/tickets', 'tickets', 4, async () => {});
      assert.equal(everyone.seen.length, 7 + arrived.length + 1);
      assert.equal(new Set(everyone.seen).size, everyone.seen.length, 'none twice');
      assert.ok(everyone.totals.every((n) => n === 7 + arrived.length + 1));
    });

    test('security events: a walk sees every event once while new ones arrive', async () => {
      const fresh = await registerUser(t.app);
      const record = async (n: number) => {
        for (let i = 0; i < n; i += 1) {
          if (i % 3 === 0) t.clock.advance(1000);
          await t.app.services.securityEvents.record({
            account_id: fresh.id,
            kind: 'login_failed',
            reason: 'wrong password',
            method: 'POST',
            path: '/api/auth/login',
            ip: '192.0.2.1',
          });
        }
      };
      await record(5);
      const before = await get(fresh, '/api/security/events?limit=200');
      const { seen, totals } = await walk(fresh, '/api/security/events', 'events', 2, () => record(1));
      assert.deepEqual(
        seen,
        (before.events as { id: number }[]).map((e) => e.id),
      );
      assert.deepEqual(totals, [5, 6, 7]);
    });

    test('webhook deliveries: a walk sees every attempt once while new attempts are recorded', async () => {
      const fresh = await registerUser(t.app);
      const empty = await get(fresh, '/api/account/webhook?limit=1');
      assert.deepEqual(Object.keys(empty).sort(), ['deliveries', 'next_cursor', 'total', 'url']);
      assert.deepEqual([empty.total, empty.next_cursor], [0, null]);
      // Attempts as the delivery job records them (its own tests send real requests: notification-delivery.test.ts).
      const attempt = async (n: number) => {
        for (let i = 0; i < n; i += 1) {
          if (i % 2 === 0) t.clock.advance(1000);
          const note = await t.db
            .insertInto('notifications')
            .values({
              account_id: fresh.id,
              kind: 'ticket.reply',
              payload: '{}',
              status: 'queued',
              attempts: 1,
              next_attempt_at: t.clock.now,
              locked_until: 0,
              created_at: t.clock.now,
              delivered_at: null,
            })
            .returning('id')
            .executeTakeFirstOrThrow();
          await t.db
            .insertInto('notification_attempts')
            .values({
              notification_id: note.id,
              account_id: fresh.id,
              at: t.clock.now,
              url: 'https://hooks.example.com/palisade',
              status_code: 503,
              error: null,
              duration_ms: 12,
            })
            .execute();
        }
      };
      await attempt(5);
      const before = await get(fresh, '/api/account/webhook?limit=200');
      const { seen, totals } = await walk(fresh, '/api/account/webhook', 'deliveries', 2, () => attempt(1));
      assert.deepEqual(
        seen,
        (before.deliveries as { id: number }[]).map((d) => d.id),
      );
      assert.equal(seen.length, 5);
      assert.deepEqual(totals, [5, 6, 7]);
    });

    test('a bad limit or cursor is a 400 naming it, on every list that pages', async () => {
      const good = (await get(user, '/api/tickets?limit=1')).next_cursor!;
      assert.match(good, /^[A-Za-z0-9_-]+$/);
      const badLimits = ['0', '201', '-1', '1.5', 'ten', '', '0050'];
      const badCursors = [
        'not a cursor',
        `${good}A`,
        good.slice(0, -2),
        Buffer.from('[1,2,3]').toString('base64url'),
        Buffer.from('{"id":1}').toString('base64url'),
        Buffer.from('[1,0]').toString('base64url'),
        Buffer.from('[1e3,2]').toString('base64url'),
        Buffer.from('[99999999999999999,2]').toString('base64url'),
      ];
      for (const [who, url] of [
        [user, '/api/tickets'],
        [admin, '/api/admin/tickets'],
        [user, '/api/security/events'],
        [user, '/api/account/webhook'],
      ] as const) {
        for (const limit of badLimits) {
          const res = await t.app.inject({
            method: 'GET',
            url: `${url}?limit=${limit}`,
            headers: { cookie: who.cookie },
          });
          assert.equal(res.statusCode, 400, `${url} limit=${limit}`);
          assert.equal(res.json().error, 'limit: expected an integer from 1 to 200');
        }
        for (const cursor of badCursors) {
          const res = await t.app.inject({
            method: 'GET',
            url: `${url}?cursor=${encodeURIComponent(cursor)}`,
            headers: { cookie: who.cookie },
          });
          assert.equal(res.statusCode, 400, `${url} cursor=${cursor}`);
          assert.equal(res.json().error, 'cursor: expected the next_cursor of an earlier page');
        }
        const twice = await t.app.inject({
          method: 'GET',
          url: `${url}?limit=1&limit=2`,
          headers: { cookie: who.cookie },
        });
        assert.equal(twice.statusCode, 400, 'a repeated parameter is not a number');
        assert.match(twice.json().error, /^limit: /);
      }
    });
  });
}
