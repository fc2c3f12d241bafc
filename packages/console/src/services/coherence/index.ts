import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { RawBuilder } from 'kysely';
import type { ConsoleConfig } from '../../config.js';
import type { Database } from '../../db/schema.js';
import { counterReads } from './counter-reads.js';
import { sqliteCommits } from './sqlite.js';
import { postgresTransport, redisTransport, type Transport } from './transports.js';

/**
 * Cache coherence across console processes, in one place (docs/coherence.md): what a process keeps
 * in memory about an account (token lookups, token-cache.ts; v1 list answers,
 * services/servers/list-cache.ts) is used only while no change to that account can be missing.
 *
 * - Writers call `changed(account)` after their commit: it drops the account here and tells every
 *   other process, through Redis pub/sub, PostgreSQL LISTEN/NOTIFY, or on SQLite (one serving
 *   process) in process, plus `PRAGMA data_version` for another connection's commits.
 * - Caches register with `onChange` and ask `ready()` (memory usable now, no I/O) or `caughtUp()`
 *   (a read of the shared change counter made after the call; each message carries the counter's
 *   next value). A process that has not yet received every change up to the value read answers
 *   from the database until it has, so a write that has returned is never hidden by a cache.
 */
export type ChangeListener = (accountId: number | null, kind: ChangeKind) => void;

/**
 * What changed: `access` — what the account's credentials resolve to (a token made or revoked, the
 * account row: disabled, permissions); `data` — only what it owns (servers, their check-ins). Token
 * lookups are dropped by `access` changes alone, v1 answers by both. Every account at once (`null`)
 * is always `access`.
 */
export type ChangeKind = 'access' | 'data';

export interface CoherenceDeps {
  db: Database;
  config: Pick<ConsoleConfig, 'databaseUrl' | 'databaseSchema' | 'redisUrl' | 'redisPrefix'>;
  /** How changes travel; by default Redis when configured, else PostgreSQL, else none (SQLite). */
  transport?: Transport | null;
}

/** Past this many accounts in one message, it says "every account" (a NOTIFY payload is at most 8,000 bytes, and an account may be in `a` and `d`). */
const MAX_ACCOUNTS_A_MESSAGE = 400;

interface Message {
  /** The account, the accounts, or null for every account. */
  a: number | number[] | null;
  /**
   * Those of `a` whose change was `data` only; the rest of `a` are `access`. A process that does not
   * read `d` (an older console in a rolling upgrade) treats every one as `access`: drops more, never less.
   */
  d?: number | number[];
  /** The sending process, which has dispatched its own message already. */
  p: string;
}

export function createCoherence({ db, config, transport = defaultTransport(db, config) }: CoherenceDeps) {
  const reads = transport ? counterReads(() => transport.readCounter()) : null;
  const sqlite = transport ? null : sqliteCommits(db, () => dispatch(null));
  const me = randomBytes(8).toString('hex');
  const listeners: ChangeListener[] = [];
  let live = false;
  let closed = false;
  let serving = false;
  /** The highest change number received (they arrive in order), and the highest a request's read found. */
  let received = 0;
  let required = 0;
  const counts = { published: 0, publishFailed: 0, received: 0, dropAll: 0, behind: 0 };

  function dispatch(accountId: number | null, kind: ChangeKind = 'access') {
    if (accountId === null) counts.dropAll += 1;
    for (const listener of listeners) listener(accountId, accountId === null ? 'access' : kind);
  }

  /** `<n> <json>`, as either transport delivers it. */
  function receive(text: string) {
    counts.received += 1;
    const space = text.indexOf(' ');
    const n = Number(text.slice(0, space));
    let message: Message | null = null;
    try {
      message = JSON.parse(text.slice(space + 1)) as Message;
    } catch {
      message = null;
    }
    if (message && message.p !== me) {
      const { a, d } = message;
      const dataOnly = new Set(Array.isArray(d) ? d : typeof d === 'number' ? [d] : []);
      const one = (accountId: unknown) =>
        typeof accountId === 'number'
          ? dispatch(accountId, dataOnly.has(accountId) ? 'data' : 'access')
          : dispatch(null);
      if (Array.isArray(a)) for (const accountId of a) one(accountId);
      else one(a);
    }
    if (Number.isSafeInteger(n) && n > received) received = n;
  }

  const publish = transport ? coalescedPublish((text) => transport.send(text), me, counts) : null;

  function caughtUpWith(n: number): boolean {
    if (!reads) return ready();
    if (n > required) required = n;
    if (received < required) counts.behind += 1;
    return ready();
  }

  function ready(): boolean {
    if (sqlite) {
      sqlite.check();
      return true;
    }
    return live && received >= required;
  }

  return {
    /** Called with the account whose cached reads are stale, or null for all of them. */
    onChange(listener: ChangeListener) {
      listeners.push(listener);
    },

    /**
     * Whether this process may answer from memory now, without I/O. On SQLite it first notices
     * another connection's commits; elsewhere it is true while subscribed and no change a request's
     * `caughtUp()` found is still on its way here.
     */
    ready,

    /**
     * Whether memory may be used for a request that arrived before this call: on PostgreSQL and
     * Redis after a read of the shared counter (batched with other requests'), which also holds
     * later `ready()` calls to it. Rejects when the read fails.
     */
    caughtUp(): boolean | Promise<boolean> {
      if (!reads) return ready();
      return reads.next().then(caughtUpWith);
    },

    /** True when the shared counter is the database's `change_counter` row (transports.ts). */
    counterInDatabase: transport?.counterInDatabase === true,

    /**
     * `caughtUp()` with the counter as read by another statement on the database that started
     * after the request arrived (the rate-limit count, plugins/rate-limits.ts): one round trip
     * fewer a turn. Only when `counterInDatabase`.
     */
    caughtUpWith,

    /**
     * After a commit that changes what an account's token lookups or v1 answers would read: drops
     * them here at once, then tells every other process; returns once they cannot miss it. `data`
     * (a check-in, a server's settings) leaves the account's token lookups kept.
     */
    async changed(accountId: number | null, kind: ChangeKind = 'access') {
      dispatch(accountId, kind);
      if (sqlite) {
        // The serving console's own caches heard it just now; another connection waits until the
        // serving console's next check must notice its commit.
        if (!serving) await sqlite.settled(performance.now());
        return;
      }
      // The write has committed: a failed publish must not fail it (counted). Redis or the database
      // being away also fails the readers' counter reads, and their subscriptions drop everything
      // when they come back.
      await publish!(accountId, kind);
    },

    /**
     * The message of `data` changes to `accountIds` as a statement to run within one the caller
     * commits (the check-in writer's group, services/checkin-writer.ts): it goes out with that
     * commit, instead of in a round trip and a commit of its own after it. Only on the PostgreSQL
     * transport (null elsewhere); after the commit, the caller calls `announced` for each account.
     */
    dataChangesWith(accountIds: number[]): RawBuilder<unknown> | null {
      if (!transport?.sendWith || accountIds.length === 0) return null;
      counts.published += 1;
      return transport.sendWith(JSON.stringify(dataMessage(accountIds, me)));
    },

    /** After the commit of a statement that carried `dataChangesWith(…)`: drops the account's reads here. */
    announced(accountId: number) {
      dispatch(accountId, 'data');
    },

    /** This process is the console serving SQLite's file (server.ts): its writes wait for nobody. */
    serve() {
      serving = true;
    },

    /** Subscribes this process (a serving console); `redis` is the app's connection when Redis is set. */
    async listen(redis: Redis | null) {
      await transport?.listen(
        {
          receive,
          // Subscribed (again): messages may have been missed, so everything is dropped, and the
          // changes up to now count as received.
          live(current) {
            if (closed) return;
            dispatch(null);
            received = Math.max(received, current);
            live = true;
          },
          lost() {
            live = false;
          },
        },
        redis,
      );
    },

    async close() {
      closed = true;
      live = false;
      await transport?.close();
    },

    /** Messages sent and received, full drops, requests that found this process behind, counter reads (for /metrics). */
    stats: () => ({ ...counts, counterReads: reads?.reads() ?? 0 }),
  };
}

/** The message of `data` changes to `accountIds` (every account past MAX_ACCOUNTS_A_MESSAGE). */
function dataMessage(accountIds: number[], me: string): Message {
  const accounts = [...new Set(accountIds)];
  if (accounts.length > MAX_ACCOUNTS_A_MESSAGE) return { a: null, p: me };
  const one = accounts.length === 1 ? accounts[0]! : accounts;
  return { a: one, d: one, p: me };
}

function defaultTransport(db: Database, config: CoherenceDeps['config']): Transport | null {
  if (config.redisUrl) return redisTransport(config);
  return config.databaseUrl ? postgresTransport(db, config) : null;
}

/**
 * Publishes an account's change once every publish already under way has finished. The accounts
 * that change meanwhile go together in the next message: one publish in flight per process, so a
 * busy console (a check-in is a change) costs the store one bump of the shared counter per round
 * trip, not one per write. Each caller still returns only after a message sent after its own commit
 * carries its account.
 */
function coalescedPublish(
  send: (text: string) => Promise<void>,
  me: string,
  counts: { published: number; publishFailed: number },
) {
  /** The accounts waiting for the next message and how each changed ('all': every account), and that message's send. */
  let queued: Map<number, ChangeKind> | 'all' | null = null;
  let queuedSend: Promise<void> | null = null;
  let inFlight: Promise<void> = Promise.resolve();
  return (accountId: number | null, kind: ChangeKind): Promise<void> => {
    if (queued === null) queued = new Map();
    if (accountId === null || queued === 'all' || queued.size >= MAX_ACCOUNTS_A_MESSAGE) queued = 'all';
    else if (queued.get(accountId) !== 'access') queued.set(accountId, kind); // access covers data
    if (!queuedSend) {
      queuedSend = inFlight.then(() => {
        const accounts = queued === 'all' || queued === null ? null : queued;
        queued = null;
        queuedSend = null;
        counts.published += 1;
        const one = <T>(list: T[]) => (list.length === 1 ? list[0]! : list);
        const message: Message = { a: accounts ? one([...accounts.keys()]) : null, p: me };
        const dataOnly = accounts ? [...accounts].filter(([, k]) => k === 'data').map(([id]) => id) : [];
        if (dataOnly.length > 0) message.d = one(dataOnly);
        inFlight = send(JSON.stringify(message)).catch(() => {
          counts.publishFailed += 1;
        });
        return inFlight;
      });
    }
    return queuedSend;
  };
}

export type Coherence = ReturnType<typeof createCoherence>;
