import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { openDatabase } from '../src/db/database.js';
import { createCoherence } from '../src/services/coherence/index.js';
import { createTokenCache, type TokenLookup } from '../src/services/coherence/token-cache.js';
import { postgresTransport, type Subscriber, type Transport } from '../src/services/coherence/transports.js';
import { createToken, dialects, registerUser, testDatabase } from './support.js';
import { twoProcesses } from './two-processes.js';

// The coherence module (src/services/coherence/, docs/coherence.md): what a console process keeps
// in memory is used only while no change to it can be missing, in this process or any other.

const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;
const redisUrl = process.env.PALISADE_TEST_REDIS_URL;

/** A transport driven by hand: the shared counter is `counter`, messages arrive when `deliver` is called. */
function handTransport() {
  let subscriber: Subscriber | null = null;
  const hand = {
    counter: 0,
    counterReads: 0,
    /** What this process sent, in order. */
    sent: [] as string[],
    /** A read out until `answerReads()`; null when reads answer at once. */
    held: null as Array<() => void> | null,
    transport: {
      async send(text: string) {
        hand.sent.push(text);
      },
      readCounter(): Promise<number> {
        hand.counterReads += 1;
        const value = hand.counter;
        if (!hand.held) return Promise.resolve(value);
        const held = hand.held;
        return new Promise<number>((resolve) => held.push(() => resolve(value)));
      },
      async listen(s: Subscriber) {
        subscriber = s;
        s.live(hand.counter);
      },
      async close() {},
    } satisfies Transport,
    /** Another process published a change to `account` (null: every account; `d`: those changed as data only); not yet delivered here. */
    published(account: number | number[] | null, d?: number | number[]) {
      hand.counter += 1;
      return `${hand.counter} ${JSON.stringify({ a: account, ...(d === undefined ? {} : { d }), p: 'elsewhere' })}`;
    },
    deliver(message: string) {
      subscriber!.receive(message);
    },
    lose: () => subscriber!.lost(),
    /** Subscribed again, the counter read after it. */
    back: () => subscriber!.live(hand.counter),
    answerReads() {
      const held = hand.held ?? [];
      hand.held = null;
      for (const answer of held) answer();
    },
  };
  return hand;
}

async function handCoherence() {
  const hand = handTransport();
  const config = { databaseUrl: null, databaseSchema: null, redisUrl: null, redisPrefix: 'unused' };
  const coherence = createCoherence({ db: null as never, config, transport: hand.transport });
  await coherence.listen(null);
  return { hand, coherence };
}

/** The database as the token cache sees it: one token of account 7, read how many times. */
function tokenRows() {
  const rows = {
    name: 'first',
    reads: 0,
    async lookup(): Promise<TokenLookup | undefined> {
      rows.reads += 1;
      const account = { id: 7, name: rows.name } as TokenLookup['account'];
      return { tokenId: 3, lastUsedAt: 0, account, hash: 'h' };
    },
  };
  return rows;
}

const counted = async (tokenId: number) => tokenId;

describe('coherence: memory is used only when no change can be missing', () => {
  test('a process behind the shared counter reads the database until the change reaches it', async () => {
    const { hand, coherence } = await handCoherence();
    const cache = createTokenCache(coherence);
    const db = tokenRows();
    assert.equal((await cache.read('h', db.lookup, counted))?.lookup.account.name, 'first');
    assert.equal((await cache.read('h', db.lookup, counted))?.also, 3, 'what runs alongside answers');
    assert.equal(db.reads, 1, 'the second read came from memory');

    // Another process renamed the account; its message has not arrived here yet.
    db.name = 'second';
    const message = hand.published(7);
    assert.equal((await cache.read('h', db.lookup, counted))?.lookup.account.name, 'second');
    assert.equal((await cache.read('h', db.lookup, counted))?.lookup.account.name, 'second');
    assert.equal(db.reads, 3, 'behind the counter, every read goes to the database');
    assert.equal(coherence.ready(), false);
    assert.equal(coherence.stats().behind, 2);

    hand.deliver(message);
    assert.equal(coherence.ready(), true);
    await cache.read('h', db.lookup, counted);
    assert.equal((await cache.read('h', db.lookup, counted))?.lookup.account.name, 'second');
    assert.equal(db.reads, 4, 'caught up: read once more (the message dropped the entry), then from memory');
  });

  test('a change to one account drops only its entries; a lost subscription stops memory until it is back', async () => {
    const { hand, coherence } = await handCoherence();
    const dropped: Array<number | null> = [];
    coherence.onChange((account) => dropped.push(account));
    const cache = createTokenCache(coherence);
    const db = tokenRows();
    await cache.read('h', db.lookup, counted);
    hand.deliver(hand.published(8));
    await cache.read('h', db.lookup, counted);
    assert.equal(db.reads, 1, "another account's change leaves account 7's lookup");

    hand.lose();
    assert.equal(coherence.ready(), false);
    await cache.read('h', db.lookup, counted);
    assert.equal(db.reads, 2, 'unsubscribed: from the database');
    hand.back();
    assert.deepEqual(dropped, [8, null], 'subscribed again: everything is dropped, as messages may have been missed');
    assert.equal(coherence.ready(), true);
    await cache.read('h', db.lookup, counted);
    await cache.read('h', db.lookup, counted);
    assert.equal(db.reads, 3, 'read once more, then from memory again');
  });

  test("a data change (a check-in) keeps the account's token lookups; an access change, or a message without `d`, drops them", async () => {
    const { hand, coherence } = await handCoherence();
    const heard: Array<[number | null, string]> = [];
    coherence.onChange((account, kind) => heard.push([account, kind]));
    const cache = createTokenCache(coherence);
    const db = tokenRows();
    await cache.read('h', db.lookup, counted);

    // In this process: a check-in's change, then another process's, each data only.
    await coherence.changed(7, 'data');
    hand.deliver(hand.published(7, 7));
    hand.deliver(hand.published([8, 7], [7, 8]));
    await cache.read('h', db.lookup, counted);
    assert.equal(db.reads, 1, 'data changes leave the lookup in memory');

    hand.deliver(hand.published([8, 7], [8])); // account 7's credentials changed, 8's data
    await cache.read('h', db.lookup, counted);
    assert.equal(db.reads, 2, 'an access change drops it');
    hand.deliver(hand.published(7)); // as an older console sends it: no `d`
    await cache.read('h', db.lookup, counted);
    assert.equal(db.reads, 3, 'a message without `d` is an access change');
    assert.deepEqual(heard, [
      [7, 'data'],
      [7, 'data'],
      [8, 'data'],
      [7, 'data'],
      [8, 'data'],
      [7, 'access'],
      [7, 'access'],
    ]);
  });

  test('what a process sends says which accounts changed as data only; access wins over data for one account', async () => {
    const { hand, coherence } = await handCoherence();
    await coherence.changed(7, 'data');
    await Promise.all([coherence.changed(7, 'data'), coherence.changed(8, 'data'), coherence.changed(7)]);
    await coherence.changed(9);
    const messages = hand.sent.map((text) => {
      const { a, d } = JSON.parse(text) as { a: unknown; d?: unknown };
      return { a, d };
    });
    assert.deepEqual(messages, [
      { a: 7, d: 7 },
      { a: [7, 8], d: 8 },
      { a: 9, d: undefined },
    ]);
  });

  test('counter reads are shared by the calls made together, never by a read already out', async () => {
    const { hand, coherence } = await handCoherence();
    hand.counterReads = 0;
    await Promise.all(Array.from({ length: 50 }, () => coherence.caughtUp()));
    assert.equal(hand.counterReads, 1, '50 calls in one turn, one read');

    hand.held = [];
    const early = coherence.caughtUp();
    await new Promise((resolve) => setImmediate(resolve)); // the read is out
    hand.deliver(hand.published(9)); // a change after that read started…
    const late = coherence.caughtUp(); // …and a call after it: must not share the read out
    hand.counter += 1; // one more change, published and not delivered
    const third = coherence.caughtUp();
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(hand.counterReads, 3, 'the later calls went out in a read of their own');
    hand.answerReads();
    assert.equal(await early, true);
    assert.equal(await late, false, 'the read that started after the call sees the undelivered change');
    assert.equal(await third, false);
    assert.equal(coherence.stats().counterReads, 3);
  });
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const me = (app: FastifyInstance, token: string) =>
  app.inject({ method: 'GET', url: '/api/v1/me', headers: bearer(token) });

for (const dialect of dialects()) {
  const transports: Array<'database' | 'redis'> =
    dialect === 'postgres' && redisUrl ? ['database', 'redis'] : ['database'];
  for (const transport of transports) {
    describe(`coherence between two consoles over one store (${dialect}, ${transport})`, () => {
      test("a token revoked in one is refused by the other at the next request; an account's change is seen", async () => {
        const { reader, writer, close } = await twoProcesses(dialect, transport);
        try {
          const user = await registerUser(writer);
          const token = await createToken(writer, user, 'shared');
          // In the reader's memory: answered from it once the reader has heard the writer's set-up.
          const deadline = Date.now() + 10_000;
          do assert.equal((await me(reader, token)).statusCode, 200);
          while (reader.services.tokens.stats().hits === 0 && Date.now() < deadline);
          assert.ok(reader.services.tokens.stats().hits > 0, 'the lookup was kept');

          // A writer changes the account row and tells the coherence module.
          await writer.db.updateTable('people').set({ name: 'Renamed' }).where('id', '=', user.id).execute();
          await writer.services.coherence.changed(user.id);
          assert.equal((await me(reader, token)).json().data.name, 'Renamed');

          const [listed] = (
            await writer.inject({ method: 'GET', url: '/api/tokens', headers: { cookie: user.cookie } })
          ).json().data.tokens as Array<{ id: number }>;
          const revoked = await writer.inject({
            method: 'DELETE',
            url: `/api/tokens/${listed!.id}`,
            headers: { cookie: user.cookie },
          });
          assert.equal(revoked.statusCode, 200, revoked.body);
          assert.equal((await me(reader, token)).statusCode, 401, 'refused at the next request');
        } finally {
          await close();
        }
      });
    });
  }
}

describe('SQLite: a commit by another connection (the admin CLI)', () => {
  test("is noticed by the serving console's next check once the writer's changed() returns", async () => {
    const database = await testDatabase('sqlite');
    const second = await openDatabase({ dataDir: database.dataDir, databaseUrl: null, databaseSchema: null });
    const config = { databaseUrl: null, databaseSchema: null, redisUrl: null, redisPrefix: 'unused' };
    try {
      const serving = createCoherence({ db: database.db, config });
      serving.serve();
      const cli = createCoherence({ db: second.db, config });
      let drops = 0;
      serving.onChange(() => {
        drops += 1;
      });
      serving.ready();
      // Rounds in which the write returns within the millisecond a check is reused fail unless the
      // writer waits (sqlite.ts); a quick machine gives many of them.
      for (let round = 1; round <= 30; round += 1) {
        serving.ready();
        await second.db.updateTable('change_counter').set({ n: round }).where('id', '=', 1).execute();
        await cli.changed(null);
        serving.ready();
        assert.equal(drops, round, `round ${round}: the commit was noticed`);
      }
    } finally {
      await second.close();
      await database.close();
    }
  });
});

describe('the change counter lives in the shared store, not in a process', { skip: !pgUrl }, () => {
  const stores: Array<'database' | 'redis'> = redisUrl ? ['database', 'redis'] : ['database'];
  for (const store of stores) {
    test(`a restarted console numbers its changes after the last one published (${store})`, async () => {
      const database = await testDatabase('postgres');
      const prefix = `palisade-test-coherence-${process.pid}-${Date.now()}`;
      const config = {
        databaseUrl: pgUrl!,
        databaseSchema: database.databaseSchema,
        redisUrl: store === 'redis' ? redisUrl! : null,
        redisPrefix: prefix,
      };
      const redis = store === 'redis' ? new Redis(redisUrl!) : null;
      const counter = async () =>
        redis
          ? Number((await redis.get(`${prefix}:changes:n`)) ?? 0)
          : postgresTransport(database.db, config).readCounter();
      try {
        const first = createCoherence({ db: database.db, config });
        for (const account of [1, 2, 3]) await first.changed(account);
        await first.close();
        assert.equal(await counter(), 3);

        // The same console started again: a new process, nothing of the first in memory.
        const again = createCoherence({ db: database.db, config });
        await again.changed(4);
        await again.close();
        assert.equal(await counter(), 4, 'numbered after the changes before the restart');
      } finally {
        redis?.disconnect();
        await database.close();
      }
    });
  }
});
