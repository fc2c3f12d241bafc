import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { sql } from 'kysely';
import { startConsoleProcess } from './console-process.js';
import { registeredCaller } from './http.js';
import { dialects, testDatabase } from './support.js';

const QUEUED = 30_500;

for (const dialect of dialects()) {
  describe(`alert history paging and channel/rule input, against a console process (${dialect})`, () => {
    test('history pages by cursor through 30,500 queued notifications; wrong-kind fields and bidi/NUL names are 400 naming the field', async () => {
      const database = await testDatabase(dialect);
      const running = await startConsoleProcess({
        PALISADE_DATA_DIR: database.dataDir,
        ...(database.databaseUrl
          ? { PALISADE_DATABASE_URL: database.databaseUrl, PALISADE_DATABASE_SCHEMA: database.databaseSchema! }
          : {}),
        PALISADE_ALLOW_PRIVATE_TARGETS: '1',
        PALISADE_BOOTSTRAP_ADMIN: '0',
      });
      try {
        const { call, accountId } = await registeredCaller(running.url, {
          email: `history-${process.pid}-${dialect}@example.com`,
          password: 'alert-history-password',
          name: 'H',
        });

        // A `url` given with a kind that has none, an `email` with a kind that has none: 400 naming it, nothing stored.
        const wrongKind = [
          [
            { name: 'w', kind: 'webhook', url: 'https://hooks.example.com/x' },
            /^url: is for slack and discord channels/,
          ],
          [{ name: 'e', kind: 'email', email: 'ops@example.net', url: 'https://hooks.example.com/x' }, /^url: /],
          [{ name: 's', kind: 'slack', url: 'https://hooks.example.com/x', email: 'ops@example.net' }, /^email: /],
        ] as const;
        for (const [body, message] of wrongKind) {
          const res = await call('POST', '/api/alerts/channels', body);
          assert.equal(res.status, 400, JSON.stringify(body));
          assert.match(res.json.error ?? '', message);
        }
        assert.deepEqual((await call('GET', '/api/alerts/channels')).json.data.channels, []);

        // A rule name with NUL or a right-to-left override (U+202E) or an isolate (U+2066): refused.
        const channel = (await call('POST', '/api/alerts/channels', { name: 'hook', kind: 'webhook' })).json.data
          .channel;
        for (const name of ['db\u0000down', 'evil\u202Egnp.exe', 'x\u2066y']) {
          const res = await call('POST', '/api/alerts/rules', { name, kind: 'offline', channel_ids: [channel.id] });
          assert.equal(res.status, 400, JSON.stringify(name));
          assert.match(res.json.error ?? '', /^name: expected no control characters/);
        }
        assert.deepEqual((await call('GET', '/api/alerts/rules')).json.data.rules, []);

        // 30,500 alert notifications queued for the account (as a long outage leaves them).
        const now = Date.now();
        for (let start = 0; start < QUEUED; start += 1000) {
          await database.db
            .insertInto('notifications')
            .values(
              Array.from({ length: Math.min(1000, QUEUED - start) }, (_, i) => ({
                account_id: accountId,
                channel_id: Number(channel.id),
                kind: 'alert.fired',
                payload: JSON.stringify({
                  kind: 'alert.fired',
                  title: `n${start + i}`,
                  body: '',
                  rule_id: null,
                  rule: null,
                  server_id: null,
                  server: null,
                  value: null,
                  at: now,
                }),
                status: 'queued' as const,
                attempts: 0,
                // Not due for an hour: the worker leaves them be while the history is read.
                next_attempt_at: now + 3600_000,
                locked_until: 0,
                // Several share a created_at, so the cursor must break ties by id.
                created_at: now - Math.floor((start + i) / 3),
                delivered_at: null,
              })),
            )
            .execute();
        }

        const first = await call('GET', '/api/alerts/history?limit=500');
        assert.equal(first.status, 200, JSON.stringify(first.json));
        assert.equal(first.json.data.history.length, 500);
        assert.equal(first.json.data.total, QUEUED);
        // Newest first; among rows queued in the same millisecond, the later one (higher id) first.
        const expected = Array.from({ length: 1000 }, (_, j) => `n${Math.floor(j / 3) * 3 + 2 - (j % 3)}`);
        assert.equal(first.json.data.history[0].title, expected[0]);
        assert.equal(typeof first.json.data.next_cursor, 'string');
        const second = await call(
          'GET',
          `/api/alerts/history?limit=500&cursor=${encodeURIComponent(first.json.data.next_cursor)}`,
        );
        assert.equal(second.status, 200, JSON.stringify(second.json));
        const titles = (page: { title: string }[]) => page.map((h) => h.title);
        assert.deepEqual(
          [...titles(first.json.data.history), ...titles(second.json.data.history)],
          expected,
          'the second page follows the first without a gap or a repeat',
        );
        const edited = await call('GET', '/api/alerts/history?limit=500&cursor=bm90LWEtY3Vyc29y');
        assert.equal(edited.status, 400);
        assert.match(edited.json.error ?? '', /^cursor: /);

        // The page is read through the account's history index, not by sorting every row.
        const plan =
          dialect === 'sqlite'
            ? await sql<{ detail: string }>`EXPLAIN QUERY PLAN SELECT id FROM notifications n
                WHERE n.account_id = ${accountId} AND n.kind LIKE 'alert.%'
                ORDER BY n.created_at DESC, n.id DESC LIMIT 501`.execute(database.db)
            : null;
        if (plan) {
          const detail = plan.rows.map((r) => r.detail).join('\n');
          assert.match(detail, /notifications_account_history/, detail);
          assert.doesNotMatch(detail, /TEMP B-TREE/, detail);
        }
      } finally {
        await running.kill();
        await database.close();
      }
    });
  });
}
