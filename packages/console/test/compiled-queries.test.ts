import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Database } from '../src/db/schema.js';
import { runCompiled } from '../src/repositories/compiled.js';
import { findServer } from '../src/repositories/servers.repository.js';
import { dialects, insertTestServer, registerUser, type TestApp, type TestUser, testApp } from './support.js';

/** findServer with its two clauses written the other way round, the parameters given in findServer's order. */
async function findServerReordered(db: Database, accountId: number, id: number) {
  const rows = await runCompiled(
    db,
    'test:findServerReordered',
    (d, p) => d.selectFrom('servers').selectAll().where('account_id', '=', p.accountId).where('id', '=', p.id),
    { id, accountId },
  );
  return rows[0];
}

for (const dialect of dialects()) {
  describe(`queries compiled once bind their parameters by name (${dialect})`, () => {
    let t: TestApp;
    let owner: TestUser;
    let stranger: TestUser;
    before(async () => {
      t = await testApp(dialect);
      owner = await registerUser(t.app);
      stranger = await registerUser(t.app);
      // The owner holds the servers whose ids are the two account ids: a binding that swapped id
      // and account_id would hand the stranger, asking for the owner's server `owner.id`, the
      // owner's server `stranger.id`, and the owner nothing.
      const ids: number[] = [];
      while (!ids.includes(owner.id) || !ids.includes(stranger.id)) {
        const server = await insertTestServer(t.app, owner, { name: `web-${ids.length + 1}` });
        assert.ok(server.id <= Math.max(owner.id, stranger.id), 'a fresh database numbers servers from 1');
        ids.push(server.id);
      }
    });
    after(() => t.close());

    test('clauses in the other order still bind each value to its own column', async () => {
      for (const serverId of [owner.id, stranger.id]) {
        for (let round = 0; round < 2; round++) {
          const mine = await findServerReordered(t.db, owner.id, serverId);
          assert.equal(mine?.id, serverId, `the owner's server ${serverId}`);
          assert.equal(mine?.account_id, owner.id);
          assert.equal(
            await findServerReordered(t.db, stranger.id, serverId),
            undefined,
            `the owner's server ${serverId} is not the stranger's`,
          );
          // The same answers as the query the console runs.
          assert.deepEqual(await findServer(t.db, owner.id, serverId), mine);
          assert.equal(await findServer(t.db, stranger.id, serverId), undefined);
        }
      }
      const res = await t.app.inject({
        method: 'GET',
        url: `/api/servers/${owner.id}`,
        headers: { cookie: stranger.cookie },
      });
      assert.equal(res.statusCode, 404, 'the stranger cannot read the owner’s server');
    });

    test('in a transaction a compiled statement is part of it, and one outside waits for its end', async () => {
      // On SQLite a compiled statement in a transaction runs straight on the connection
      // (runInSqliteTransaction, db/database.ts); one outside must still wait for the transaction.
      const rename = (db: Database, name: string) =>
        runCompiled(
          db,
          'test:rename',
          (d, p) => d.updateTable('servers').set({ name: p.name }).where('id', '=', p.id),
          { name, id: owner.id },
        );
      const nameNow = async (db: Database) => (await findServer(db, owner.id, owner.id))?.name;
      const before = await nameNow(t.db);
      let outside: Promise<unknown> | undefined;
      await assert.rejects(
        t.db.transaction().execute(async (trx) => {
          await rename(trx, 'inside');
          assert.equal(await nameNow(trx), 'inside', 'the transaction reads its own write');
          outside = rename(t.db, 'outside'); // not awaited here: it waits for the transaction
          throw new Error('roll back');
        }),
        /roll back/,
      );
      await outside;
      // Run inside the transaction, the outside rename would have been rolled back with it.
      assert.equal(await nameNow(t.db), 'outside');
      await t.db.transaction().execute((trx) => rename(trx, before!));
      assert.equal(await nameNow(t.db), before, 'a committed compiled statement stays');
    });

    test('a name used twice, a name missing from the query or a constant left in it fails when compiled', async () => {
      const cases: [string, Promise<unknown>, RegExp][] = [
        [
          'twice',
          runCompiled(
            t.db,
            'test:twice',
            (d, p) => d.selectFrom('servers').selectAll().where('id', '=', p.id).where('account_id', '=', p.id),
            { id: 1 },
          ),
          /^Error: compiled query test:twice: parameter id is used 2 times in the query, expected exactly once$/,
        ],
        [
          'missing',
          runCompiled(t.db, 'test:missing', (d, p) => d.selectFrom('servers').selectAll().where('id', '=', p.id), {
            id: 1,
            accountId: owner.id,
          }),
          /^Error: compiled query test:missing: parameter accountId is used 0 times in the query, expected exactly once$/,
        ],
        [
          'constant',
          runCompiled(
            t.db,
            'test:constant',
            (d, p) => d.selectFrom('servers').selectAll().where('account_id', '=', 0).where('id', '=', p.id),
            { id: 1 },
          ),
          /^Error: compiled query test:constant: parameter 1 is the constant 0, not one of the named parameters \(id\)$/,
        ],
      ];
      for (const [what, run, message] of cases) {
        await assert.rejects(run, (e: Error) => message.test(String(e)), what);
      }
      // Nothing half-compiled is kept: the next call fails the same way.
      await assert.rejects(
        runCompiled(t.db, 'test:missing', (d, p) => d.selectFrom('servers').selectAll().where('id', '=', p.id), {
          id: 1,
          accountId: owner.id,
        }),
        /parameter accountId is used 0 times/,
      );
    });
  });
}
