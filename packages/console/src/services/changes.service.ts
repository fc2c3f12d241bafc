import { createHash, randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import type { ConsoleConfig } from '../config.js';
import { dataVersion } from '../db/database.js';
import type { Database } from '../db/schema.js';
import { changeCounterKey } from '../plugins/rate-limits.js';
import { currentChange, publishChange } from '../repositories/changes.repository.js';

/**
 * Tells every console process that what it holds in memory about an account is stale: the cached
 * token → account lookups (access-tokens.service.ts) and v1 list answers (servers/index.ts).
 * docs/performance.md, "v1 reads from memory", explains the design.
 *
 * The engines already there carry the news:
 * - with PALISADE_REDIS_URL, a Redis pub/sub channel;
 * - on PostgreSQL without Redis, LISTEN/NOTIFY;
 * - on SQLite (one serving process), this process's listeners, plus `PRAGMA data_version`, which
 *   moves when another connection (the admin CLI) commits: then everything is dropped.
 *
 * "At once" across processes: every message carries the next number of a shared counter, bumped in
 * the same atomic step as the publish (a Lua script; one SQL statement). Each token request's
 * rate-limit round trip reads that counter too (plugins/rate-limits.ts), and reports it here with
 * `observe()`: a process that has not yet received every change up to it reads from the database
 * until it has. So a write that has returned is never hidden by a cache, whichever process answers
 * next, at no extra round trip.
 *
 * A process trusts its caches only while it is subscribed; when the subscription comes back it
 * drops everything, as messages may have been missed meanwhile.
 */
export type ChangeListener = (accountId: number | null) => void;

export interface ChangesDeps {
  db: Database;
  config: Pick<ConsoleConfig, 'databaseUrl' | 'databaseSchema' | 'redisUrl' | 'redisPrefix'>;
}

const RECONNECT_MS = 1000;
/** On SQLite, `PRAGMA data_version` is read at most this often (ms, monotonic). */
const VERSION_CHECK_MS = 1;
/** …and a write from a process other than the serving console returns this long after it (ms). */
export const SQLITE_WRITER_WAIT_MS = 2 * VERSION_CHECK_MS + 1;
/** Past this many accounts in one message, it says "every account" (a NOTIFY payload is at most 8,000 bytes). */
const MAX_ACCOUNTS_A_MESSAGE = 500;

/** Bumps the change counter and publishes `<n> <message>`: KEYS[1] the counter; ARGV[1] the channel, ARGV[2] the message. */
const PUBLISH_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], n .. ' ' .. ARGV[2])
return n
`;

type PublishingRedis = Redis & {
  palisadePublishChange(counter: string, channel: string, message: string): Promise<number>;
};

interface Message {
  /** The account, the accounts, or null for every account. */
  a: number | number[] | null;
  /** The sending process, which has dispatched its own message already. */
  p: string;
}

export function createChangesService({ db, config }: ChangesDeps) {
  const transport: 'redis' | 'postgres' | 'sqlite' = config.redisUrl
    ? 'redis'
    : config.databaseUrl
      ? 'postgres'
      : 'sqlite';
  const me = randomBytes(8).toString('hex');
  const listeners: ChangeListener[] = [];
  let live = false;
  let closed = false;
  /** The highest change number received (they arrive in order), and the highest seen in a rate-limit answer. */
  let received = 0;
  let required = 0;
  let stopListening: (() => Promise<void>) | null = null;
  let sharedRedis: PublishingRedis | null = null;
  let seenVersion: number | null = null;

  const counts = { published: 0, publishFailed: 0, received: 0, dropAll: 0, behind: 0 };
  /** The accounts waiting for the next message ('all': every account), and that message's send. */
  let queued: Set<number> | 'all' | null = null;
  let queuedSend: Promise<void> | null = null;
  let inFlight: Promise<void> = Promise.resolve();

  const redisChannel = `${config.redisPrefix}:changes`;
  const redisCounter = changeCounterKey(config.redisPrefix);
  // NOTIFY channels are database-wide: one per schema, so consoles on other schemas are not disturbed.
  const pgChannel = `palisade_changes_${createHash('sha256')
    .update(config.databaseSchema ?? 'public')
    .digest('hex')
    .slice(0, 16)}`;

  let serving = false;

  function dispatch(accountId: number | null) {
    if (accountId === null) counts.dropAll += 1;
    for (const listener of listeners) listener(accountId);
  }

  /** `<n> <json>`, as published by either engine. */
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
      const { a } = message;
      if (Array.isArray(a)) for (const accountId of a) dispatch(typeof accountId === 'number' ? accountId : null);
      else dispatch(typeof a === 'number' ? a : null);
    }
    if (Number.isSafeInteger(n) && n > received) received = n;
  }

  const publishing = (redis: Redis) => {
    if (!('palisadePublishChange' in redis))
      redis.defineCommand('palisadePublishChange', { numberOfKeys: 1, lua: PUBLISH_SCRIPT });
    return redis as PublishingRedis;
  };

  async function send(text: string) {
    if (transport === 'postgres') {
      await publishChange(db, pgChannel, text);
      return;
    }
    if (sharedRedis) {
      await sharedRedis.palisadePublishChange(redisCounter, redisChannel, text);
      return;
    }
    // A process that never listened (the admin CLI): one connection for this message.
    const once = new Redis(config.redisUrl!, { maxRetriesPerRequest: 2, lazyConnect: true });
    try {
      await once.connect();
      await publishing(once).palisadePublishChange(redisCounter, redisChannel, text);
    } finally {
      once.disconnect();
    }
  }

  /**
   * Publishes the account's change once every publish already under way has finished. The accounts
   * that change meanwhile go together in the next message: one publish in flight per process, so a
   * busy console (a check-in is a change) costs the database or Redis one bump of the shared counter
   * per round trip, not one per write. Each caller still returns only after a message sent after
   * its own commit carries its account.
   */
  function publish(accountId: number | null): Promise<void> {
    if (queued === null) queued = new Set();
    if (accountId === null || queued === 'all' || queued.size >= MAX_ACCOUNTS_A_MESSAGE) queued = 'all';
    else queued.add(accountId);
    if (!queuedSend) {
      queuedSend = inFlight.then(() => {
        const accounts = queued === 'all' || queued === null ? null : [...queued];
        queued = null;
        queuedSend = null;
        counts.published += 1;
        const a = accounts?.length === 1 ? accounts[0]! : accounts;
        inFlight = send(JSON.stringify({ a, p: me } satisfies Message)).catch(() => {
          counts.publishFailed += 1;
        });
        return inFlight;
      });
    }
    return queuedSend;
  }

  /** Subscribed (again): everything is dropped, and the changes up to now count as received. */
  function goLive(current: number) {
    if (closed) return;
    dispatch(null);
    received = Math.max(received, current);
    live = true;
  }

  function listenRedis(redis: Redis) {
    sharedRedis = publishing(redis);
    const sub = redis.duplicate();
    sub.on('message', (_channel: string, text: string) => receive(text));
    sub.on('close', () => {
      live = false;
    });
    const subscribe = () =>
      sub
        .subscribe(redisChannel)
        .then(() => redis.get(redisCounter))
        .then((n) => goLive(Number(n ?? 0)), noop);
    // ioredis subscribes again after reconnecting, then emits `ready`; a SUBSCRIBE of our own is
    // answered after its, so reading from memory starts again only once subscribed.
    sub.on('ready', () => {
      if (!live && !closed) subscribe();
    });
    sub.on('error', noop); // it reconnects by itself; `close` has already stopped reading from memory
    stopListening = async () => {
      sub.disconnect();
    };
    // Not awaited: a console starts while Redis is down, and reads from memory once subscribed.
    subscribe();
  }

  async function listenPostgres() {
    let client: pg.Client | null = null;
    let timer: NodeJS.Timeout | null = null;
    const connect = async () => {
      timer = null;
      const c = new pg.Client({ connectionString: config.databaseUrl! });
      c.on('notification', (n) => {
        if (n.channel === pgChannel && n.payload !== undefined) receive(n.payload);
      });
      const lost = () => {
        live = false;
        c.removeAllListeners('end');
        c.end().catch(noop);
        if (client === c) client = null;
        if (!closed && !timer) timer = setTimeout(connect, RECONNECT_MS).unref();
      };
      c.on('error', lost);
      c.on('end', lost);
      try {
        await c.connect();
        await c.query(`LISTEN "${pgChannel}"`);
        client = c;
        goLive(await currentChange(db));
      } catch {
        lost();
      }
    };
    stopListening = async () => {
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners('end');
        await c.end().catch(noop);
      }
    };
    await connect();
  }

  /**
   * Whether this process may answer from memory now. On SQLite it first notices another
   * connection's commits (`data_version` moved) and drops everything; elsewhere it is true while
   * subscribed and no change known to have happened is still on its way here.
   */
  let versionReadAt = Number.NEGATIVE_INFINITY;
  function ready(): boolean {
    if (transport !== 'sqlite') return live && received >= required;
    // data_version is read at most once every VERSION_CHECK_MS (it takes the WAL's read lock: two
    // fcntl calls, the largest cost of a v1 answer from memory). Still exact: any other connection's
    // `changed()` returns only SQLITE_WRITER_WAIT_MS after its commit, so a request that begins
    // after it returned finds a read made after that commit (docs/decisions.md).
    const now = performance.now();
    if (now - versionReadAt < VERSION_CHECK_MS) return true;
    versionReadAt = now;
    const version = dataVersion(db);
    if (version !== seenVersion) {
      if (seenVersion !== null) dispatch(null);
      seenVersion = version;
    }
    return true;
  }

  return {
    transport,

    /** Called with the account whose cached reads are stale, or null for all of them. */
    onChange(listener: ChangeListener) {
      listeners.push(listener);
    },

    /**
     * After a commit that changes what an account's token lookups or v1 answers would read: drops
     * them here at once, then publishes to every other process.
     */
    async changed(accountId: number | null) {
      dispatch(accountId);
      if (transport === 'sqlite') {
        // Another connection (the admin CLI) returns once the serving console must have seen the
        // commit (ready() above); the serving console's own caches heard it just now.
        if (!serving) await new Promise((resolve) => setTimeout(resolve, SQLITE_WRITER_WAIT_MS));
        return;
      }
      // The write has committed: a failed publish must not fail it (publish() counts it). Redis or
      // the database being away also fails the readers' rate-limit round trips, and their
      // subscriptions drop everything when they come back.
      await publish(accountId);
    },

    /**
     * The change counter as a rate-limit round trip just read it (undefined: not read). Answers
     * whether this process has received every change up to it, so its memory may be used now.
     */
    observe(change: number | undefined): boolean {
      // SQLite: the lookup's own ready() has just read data_version; nothing is on its way.
      if (transport === 'sqlite') return true;
      if (change !== undefined && change > required) required = change;
      if (received < required) counts.behind += 1;
      return ready();
    },

    ready,

    /**
     * This process is the console serving SQLite's file (server.ts): its writes need not wait for
     * another process to see them (docs/deploy.md: one serving process on SQLite).
     */
    serve() {
      serving = true;
    },

    /** Subscribes this process (a serving console); `redis` is the app's connection when Redis is set. */
    async listen(redis: Redis | null) {
      if (transport === 'redis' && redis) listenRedis(redis);
      else if (transport === 'postgres') await listenPostgres();
    },

    async close() {
      closed = true;
      live = false;
      await stopListening?.();
    },

    /** Messages sent and received by this process, full drops, and requests that found it behind (for /metrics). */
    stats: () => ({ ...counts }),
  };
}

function noop() {}

export type ChangesService = ReturnType<typeof createChangesService>;
