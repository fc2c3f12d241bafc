import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { claimNotification, deliveryCandidates } from '../src/repositories/notifications.repository.js';
import { MAX_STARTING, PER_ENDPOINT } from '../src/services/notification-delivery.js';
import { dialects, registerUser, type TestApp, type TestUser, testApp } from './support.js';

/** A real local receiver that accepts every request and never answers (until closed). */
async function hangingReceiver() {
  const open = new Set<http.ServerResponse>();
  let received = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    received += 1;
    open.add(res);
    res.on('close', () => open.delete(res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hang`,
    received: () => received,
    open: () => open.size,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}

/** A real local receiver that answers 204 and resolves `arrived` on the first delivery. */
async function workingReceiver() {
  const deliveries: string[] = [];
  let arrive: () => void = () => {};
  const arrived = new Promise<void>((resolve) => {
    arrive = resolve;
  });
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      deliveries.push(String(req.headers['x-palisade-delivery']));
      res.writeHead(204).end();
      arrive();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    deliveries,
    arrived,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

for (const dialect of dialects()) {
  describe(`notification delivery that one endpoint cannot stall (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await testApp(dialect, { PALISADE_ALLOW_PRIVATE_TARGETS: '1' });
    });
    after(async () => {
      await t.app.services.notifications.settle();
      await t.close();
    });

    const call = (who: TestUser, method: 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) =>
      t.app.inject({
        method,
        url,
        headers: { cookie: who.cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      });
    const openTickets = async (who: TestUser, count: number) => {
      const productId = (await t.app.services.catalog.addProduct(who.id, 2)).id;
      for (let i = 0; i < count; i += 1) {
        const res = await call(who, 'POST', '/api/tickets', { product_id: productId, subject: `t${i}`, message: 'm' });
        assert.equal(res.statusCode, 201, res.body);
      }
    };
    const rows = (accountId: number) =>
      t.db.selectFrom('notifications').selectAll().where('account_id', '=', accountId).orderBy('id').execute();

    test("an endpoint that accepts and never answers does not keep another account's endpoint waiting", async () => {
      const hanging = await hangingReceiver();
      const working = await workingReceiver();
      const errors: unknown[] = [];
      try {
        // Account A: a hanging webhook and a backlog queued first, larger than every bound.
        const a = await registerUser(t.app);
        assert.equal((await call(a, 'PUT', '/api/account/webhook', { url: hanging.url })).statusCode, 200);
        await openTickets(a, MAX_STARTING + 4);
        // Account B: a working webhook, one notification queued after all of A's.
        const b = await registerUser(t.app);
        assert.equal((await call(b, 'PUT', '/api/account/webhook', { url: working.url })).statusCode, 200);
        await openTickets(b, 1);

        await t.app.services.notifications.pump((err) => errors.push(err));
        await working.arrived;
        // The receiver has it; the console records the attempt right after it answers.
        while ((await rows(b.id))[0]!.status !== 'delivered') await new Promise((r) => setTimeout(r, 20));
        assert.deepEqual(errors, []);
        assert.equal(working.deliveries.length, 1, 'B received its notification');
        assert.equal((await rows(b.id)).map((r) => r.status).join(), 'delivered', 'and it is recorded as delivered');
        // …while A's endpoint is still holding its requests unanswered, and only as many as the bound.
        assert.ok(hanging.open() > 0, 'A is still hanging');
        assert.ok(hanging.received() <= PER_ENDPOINT, `at most ${PER_ENDPOINT} in flight to one endpoint`);
        const aRows = await rows(a.id);
        assert.equal(aRows.filter((r) => r.status === 'delivered').length, 0);
        assert.equal(aRows.filter((r) => r.locked_until > t.clock.now).length, hanging.open(), 'claimed = in flight');
      } finally {
        await hanging.close();
        await t.app.services.notifications.settle();
        await working.close();
      }
    });

    test("with many undeliverable rows queued, a new account's notification is the first one sent", async () => {
      // An account without a webhook: its notifications are parked, not polled.
      const silent = await registerUser(t.app);
      await openTickets(silent, 3);
      assert.deepEqual(
        (await rows(silent.id)).map((r) => r.status),
        ['parked', 'parked', 'parked'],
      );
      // A large backlog of rows queued without a webhook (as consoles before migration 0007 left them).
      const backlog = await registerUser(t.app);
      const now = t.clock.now;
      for (let i = 0; i < 20; i += 1) {
        await t.db
          .insertInto('notifications')
          .values(
            Array.from({ length: 500 }, (_, j) => ({
              account_id: backlog.id,
              kind: 'ticket.created',
              payload: JSON.stringify({ kind: 'ticket.created', n: i * 500 + j }),
              status: 'queued' as const,
              attempts: 3,
              next_attempt_at: now - 1000,
              locked_until: 0,
              created_at: now - 3600_000,
              delivered_at: null,
            })),
          )
          .execute();
      }

      const working = await workingReceiver();
      try {
        const fresh = await registerUser(t.app);
        assert.equal((await call(fresh, 'PUT', '/api/account/webhook', { url: working.url })).statusCode, 200);
        await openTickets(fresh, 1);
        assert.equal(await t.app.services.notifications.runOnce(1), 1, 'the first delivery of the round is hers');
        assert.equal(working.deliveries.length, 1);

        // Housekeeping parks the backlog (no webhook), so it is not polled any more.
        const fixed = await t.app.services.notifications.reconcile();
        assert.equal(fixed.parked, 10_000);
        assert.equal((await rows(backlog.id)).filter((r) => r.status !== 'parked').length, 0);

        // Setting a webhook later delivers what was parked for that account.
        assert.equal((await call(silent, 'PUT', '/api/account/webhook', { url: working.url })).statusCode, 200);
        await t.app.services.notifications.runOnce(10);
        assert.deepEqual(
          (await rows(silent.id)).map((r) => r.status),
          ['delivered', 'delivered', 'delivered'],
        );
        // Removing it parks what is still queued; parked rows older than 26 hours are given up.
        assert.equal((await call(silent, 'DELETE', '/api/account/webhook')).statusCode, 200);
        await openTickets(silent, 1);
        assert.equal((await rows(silent.id)).at(-1)!.status, 'parked');
        t.clock.advance(27 * 3600_000);
        assert.ok((await t.app.services.notifications.reconcile()).failed >= 10_001);
        assert.equal((await rows(silent.id)).at(-1)!.status, 'failed');
      } finally {
        await working.close();
      }
    });

    test('a kept-alive connection reset before any answer is retried at once on a new one, not counted as a failure', async () => {
      // A real receiver that answers the first request on each connection (keeping it open) and
      // drops the connection on any later request on it, as a server closing idle sockets does.
      const perSocket = new Map<object, number>();
      const delivered: string[] = [];
      let resets = 0;
      const server = http.createServer((req, res) => {
        const seen = (perSocket.get(req.socket) ?? 0) + 1;
        perSocket.set(req.socket, seen);
        if (seen > 1) {
          resets += 1;
          req.socket.destroy();
          return;
        }
        req.resume();
        req.on('end', () => {
          delivered.push(String(req.headers['x-palisade-delivery']));
          res.writeHead(204).end();
        });
      });
      server.keepAliveTimeout = 60_000;
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const a = await registerUser(t.app);
        const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
        assert.equal((await call(a, 'PUT', '/api/account/webhook', { url })).statusCode, 200);
        await openTickets(a, 1);
        assert.equal(
          await t.app.services.notifications.runOnce(1),
          1,
          'the first goes out and leaves its socket pooled',
        );
        await openTickets(a, 1);
        assert.equal(await t.app.services.notifications.runOnce(1), 1, 'the second is delivered in the same attempt');
        assert.equal(resets, 1, 'it went out on the pooled socket first, which was reset');
        const sent = await rows(a.id);
        assert.deepEqual(
          sent.map((r) => [r.status, r.attempts]),
          [
            ['delivered', 1],
            ['delivered', 1],
          ],
        );
        assert.deepEqual(
          delivered,
          sent.map((r) => String(r.id)),
        );
        const log = await t.db.selectFrom('notification_attempts').selectAll().where('account_id', '=', a.id).execute();
        assert.deepEqual(
          log.map((l) => [l.status_code, l.error]),
          [
            [204, null],
            [204, null],
          ],
          'no failed attempt is logged',
        );
      } finally {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      }
    });

    test("an attempt's bookkeeping is one transaction: a crash within it leaves none of it, and the row is sent again", async () => {
      const working = await workingReceiver();
      // A database fault in the middle of the bookkeeping (updating the webhook's record, after the
      // attempt's log line is written), standing in for a process that dies there.
      const crash =
        dialect === 'postgres'
          ? [
              sql`CREATE FUNCTION crash_mid_attempt() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'simulated crash'; END $$ LANGUAGE plpgsql`,
              sql`CREATE TRIGGER crash_mid_attempt BEFORE UPDATE ON account_webhooks FOR EACH ROW EXECUTE FUNCTION crash_mid_attempt()`,
            ]
          : [
              sql`CREATE TRIGGER crash_mid_attempt BEFORE UPDATE ON account_webhooks BEGIN SELECT RAISE(ABORT, 'simulated crash'); END`,
            ];
      const dropCrash = () =>
        sql`DROP TRIGGER IF EXISTS crash_mid_attempt${sql.raw(dialect === 'postgres' ? ' ON account_webhooks' : '')}`.execute(
          t.db,
        );
      try {
        const a = await registerUser(t.app);
        assert.equal((await call(a, 'PUT', '/api/account/webhook', { url: working.url })).statusCode, 200);
        await openTickets(a, 1);
        for (const statement of crash) await statement.execute(t.db);
        await assert.rejects(t.app.services.notifications.runOnce(1), /simulated crash/);
        await dropCrash();
        assert.equal(working.deliveries.length, 1, 'the receiver had it before the crash');
        const attempts = () =>
          t.db.selectFrom('notification_attempts').selectAll().where('account_id', '=', a.id).execute();
        const [claimed] = await rows(a.id);
        assert.deepEqual([claimed!.status, claimed!.attempts], ['queued', 0], 'nothing of the attempt was kept');
        assert.equal((await attempts()).length, 0, 'not even its log line');
        assert.ok(claimed!.locked_until > t.clock.now, 'the claim still holds it: no other round sends it meanwhile');
        assert.equal(await t.app.services.notifications.runOnce(1), 0);

        // The claim runs out; the row is sent again, and its log agrees with it.
        t.clock.advance(61_000);
        assert.equal(await t.app.services.notifications.runOnce(1), 1);
        const [done] = await rows(a.id);
        assert.deepEqual([done!.status, done!.attempts], ['delivered', 1]);
        assert.equal((await attempts()).length, 1);
        assert.deepEqual(working.deliveries, [String(done!.id), String(done!.id)], 'the same delivery id both times');
      } finally {
        await dropCrash();
        await working.close();
      }
    });

    test("the pick-up reads each due endpoint's oldest rows, not every due row", async (ctx) => {
      // 200 endpoints (closed ports: nothing is delivered here) with 20,000 rows due, and one
      // endpoint known to answer, with one.
      const now = t.clock.now;
      const accounts = await t.db
        .insertInto('accounts')
        .values(
          Array.from({ length: 201 }, (_, i) => ({
            email: `pickup-${dialect}-${i}@example.com`,
            name: `P${i}`,
            password_hash: 'x',
            role: 'user' as const,
            permissions: '[]',
            disabled_at: null,
            created_at: now,
          })),
        )
        .returning('id')
        .execute();
      const ids = accounts.map((a) => Number(a.id));
      // Each a team of one, with its person: later sign-ups keep a person's id equal to their first team's.
      await t.db
        .insertInto('people')
        .values(
          ids.map((_, i) => ({
            email: `pickup-${dialect}-${i}@example.com`,
            name: `P${i}`,
            password_hash: 'x',
            role: 'user' as const,
            disabled_at: null,
            created_at: now,
            totp_secret_enc: null,
            totp_pending_enc: null,
            totp_enabled_at: null,
            totp_last_step: null,
          })),
        )
        .execute();
      ctx.after(() => t.db.deleteFrom('people').where('email', 'like', `pickup-${dialect}-%`).execute());
      ctx.after(() => t.db.deleteFrom('notifications').where('account_id', 'in', ids).execute());
      const [healthy, ...busy] = ids;
      await t.db
        .insertInto('account_webhooks')
        .values(
          ids.map((id) => ({
            account_id: id,
            url: `http://127.0.0.1:9/${id}`,
            secret_enc: 'x',
            updated_at: now,
            ...(id === healthy ? { last_success_at: now - 1000 } : {}),
          })),
        )
        .execute();
      const due = (accountId: number, n: number) => ({
        account_id: accountId,
        kind: 'ticket.reply',
        payload: JSON.stringify({ n }),
        status: 'queued' as const,
        attempts: 0,
        next_attempt_at: now - 60_000 + (n % 1000),
        locked_until: 0,
        created_at: now - 60_000,
        delivered_at: null,
      });
      for (let start = 0; start < 20_000; start += 1000) {
        await t.db
          .insertInto('notifications')
          .values(Array.from({ length: 1000 }, (_, i) => due(busy[(start + i) % busy.length]!, start + i)))
          .execute();
      }
      await t.db.insertInto('notifications').values(due(healthy!, 0)).execute();

      const pick = (db: typeof t.db) =>
        deliveryCandidates(db, { now, perEndpoint: PER_ENDPOINT, limit: 64, skipEndpoints: [] });
      const candidates = await pick(t.db);
      assert.equal(candidates[0]!.account_id, healthy, 'the endpoint that answers goes first');
      assert.equal(candidates.length, 64);
      const perAccount = new Map<number, number>();
      for (const c of candidates) perAccount.set(c.account_id, (perAccount.get(c.account_id) ?? 0) + 1);
      assert.ok(
        [...perAccount.values()].every((n) => n <= PER_ENDPOINT),
        'at most the bound per endpoint',
      );
      for (const [accountId] of perAccount) {
        const oldest = candidates.find((c) => c.account_id === accountId)!;
        const first = await t.db
          .selectFrom('notifications')
          .select('id')
          .where('account_id', '=', accountId)
          .where('status', '=', 'queued')
          .orderBy('next_attempt_at')
          .orderBy('id')
          .executeTakeFirstOrThrow();
        assert.equal(oldest.id, Number(first.id), "each endpoint's oldest row first");
      }

      if (dialect === 'postgres') {
        // The rows PostgreSQL read from the table for one pick-up: its per-transaction statistics
        // (pg_stat_xact_user_tables), which count this transaction's reads alone. The shared
        // statistics would also take in whatever other connections (the checks above, the console's
        // own delivery rounds) flush meanwhile. A few rows per endpoint, not the 20,000 due: both
        // as the rows were just written and once the table has statistics (autovacuum's ANALYZE
        // comes at a time of its own choosing, and the planner's choice changes with it).
        const readByPick = () =>
          t.db.transaction().execute(async (trx) => {
            const counted = async () => {
              const { rows } = await sql<{ n: string }>`
                SELECT COALESCE(seq_tup_read, 0) + COALESCE(idx_tup_fetch, 0) AS n FROM pg_stat_xact_user_tables
                WHERE relname = 'notifications' AND schemaname = current_schema()`.execute(trx);
              return Number(rows[0]!.n);
            };
            const before = await counted();
            await pick(trx);
            return (await counted()) - before;
          });
        const fresh = await readByPick();
        await sql`ANALYZE notifications`.execute(t.db);
        const analysed = await readByPick();
        ctx.diagnostic(`one pick-up read ${fresh} rows of notifications, ${analysed} once analysed`);
        assert.ok(fresh < 2000, `one pick-up read ${fresh} rows of notifications`);
        assert.ok(analysed < 2000, `one pick-up read ${analysed} rows of notifications once the table was analysed`);
      }
    });

    test('a row is claimed by exactly one of many racing claimers; on PostgreSQL a row being claimed is skipped, not waited on', async () => {
      const working = await workingReceiver();
      const who = await registerUser(t.app);
      try {
        assert.equal((await call(who, 'PUT', '/api/account/webhook', { url: working.url })).statusCode, 200);
        await openTickets(who, 2);
        const [first, second] = await rows(who.id);
        const claimOf = (id: number) => ({
          id,
          accountId: who.id,
          channelId: 0,
          now: t.clock.now,
          until: t.clock.now + 60_000,
          perEndpoint: PER_ENDPOINT,
        });
        // Eight claimers at once (eight pool connections on PostgreSQL): one wins.
        const wins = await Promise.all(Array.from({ length: 8 }, () => claimNotification(t.db, claimOf(first!.id))));
        assert.equal(wins.filter(Boolean).length, 1, 'claimed exactly once');
        if (dialect !== 'postgres') return;

        // Another console's claim holds the second row's lock: this one moves on at once.
        await t.db.transaction().execute(async (other) => {
          await sql`SELECT id FROM notifications WHERE id = ${second!.id} FOR UPDATE`.execute(other);
          const holder = (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(other)).rows[0]!.pid;
          let settled = false;
          const waiting = async () => {
            while (!settled) {
              const blocked = await sql<{ n: string }>`SELECT count(*) AS n FROM pg_stat_activity
                WHERE ${holder}::int = ANY(pg_blocking_pids(pid))`.execute(t.db);
              if (Number(blocked.rows[0]!.n) > 0) return 'waited on the lock' as const;
              await new Promise((r) => setTimeout(r, 20));
            }
            return 'stopped' as const;
          };
          const outcome = await Promise.race([claimNotification(t.db, claimOf(second!.id)), waiting()]);
          settled = true;
          assert.equal(outcome, false, 'skipped while locked');
        });
        // Once the other claim is over, the row is claimable.
        assert.equal(await claimNotification(t.db, claimOf(second!.id)), true);
      } finally {
        // Claimed here and never sent: gone, so that later tests' rounds do not meet them.
        await t.db.deleteFrom('notifications').where('account_id', '=', who.id).execute();
        await working.close();
      }
    });

    test('a failing endpoint is served after healthy ones, and its queue waits with it', async () => {
      const failing = http.createServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(500).end());
      });
      await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve));
      const working = await workingReceiver();
      try {
        const a = await registerUser(t.app);
        const url = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/fail`;
        assert.equal((await call(a, 'PUT', '/api/account/webhook', { url })).statusCode, 200);
        await openTickets(a, 5);
        await t.app.services.notifications.runOnce(20);
        const waiting = await rows(a.id);
        assert.equal(waiting.filter((r) => r.attempts === 1).length, PER_ENDPOINT);
        assert.ok(
          waiting.every((r) => r.status === 'queued' && r.next_attempt_at > t.clock.now),
          'every queued row of the failing endpoint waits for its retry',
        );
        const hook = await t.db
          .selectFrom('account_webhooks')
          .selectAll()
          .where('account_id', '=', a.id)
          .executeTakeFirstOrThrow();
        assert.equal(hook.failures, PER_ENDPOINT);

        // Both due again: the healthy account's notification goes first even though it is newer.
        const b = await registerUser(t.app);
        assert.equal((await call(b, 'PUT', '/api/account/webhook', { url: working.url })).statusCode, 200);
        t.clock.advance(60_000);
        await openTickets(b, 1);
        assert.equal(await t.app.services.notifications.runOnce(1), 1);
        assert.equal(working.deliveries.length, 1);
        // A new URL clears the failure count and makes the waiting queue due at once.
        assert.equal((await call(a, 'PUT', '/api/account/webhook', { url: working.url })).statusCode, 200);
        await t.app.services.notifications.runOnce(10);
        assert.equal((await rows(a.id)).filter((r) => r.status === 'delivered').length, 5);
      } finally {
        await new Promise((resolve) => failing.close(resolve));
        await working.close();
      }
    });
  });
}
