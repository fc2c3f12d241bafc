import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { RawBuilder } from 'kysely';
import pg from 'pg';
import type { ConsoleConfig } from '../../config.js';
import type { Database } from '../../db/schema.js';
import { currentChange, publishChange, publishChangeWith } from '../../repositories/changes.repository.js';

/** What a transport tells the coherence module (index.ts) about its subscription. */
export interface Subscriber {
  /** A message `<n> <text>`, in the order of the numbers. */
  receive(message: string): void;
  /** Subscribed (again); `current` is the shared counter read after subscribing. */
  live(current: number): void;
  /** The subscription dropped: messages may be missed until `live` again. */
  lost(): void;
}

/**
 * How a change reaches the other console processes: each message carries the next value of one
 * shared counter, bumped in the same atomic step as the send, so numbers follow commit order.
 */
export interface Transport {
  send(text: string): Promise<void>;
  /**
   * `send` as a statement to run within another statement on the console's database, sent with its
   * commit (the PostgreSQL transport only).
   */
  sendWith?(text: string): RawBuilder<unknown>;
  /** The shared counter, read by a round trip that starts after this call. */
  readCounter(): Promise<number>;
  /**
   * True when the counter is the console database's `change_counter` row, so a statement on that
   * database may read it along with its own work (plugins/rate-limits.ts).
   */
  readonly counterInDatabase?: boolean;
  /** Subscribes this process; `redis` is the app's connection when Redis is set. */
  listen(subscriber: Subscriber, redis: Redis | null): Promise<void>;
  close(): Promise<void>;
}

const RECONNECT_MS = 1000;

/** Bumps the change counter and publishes `<n> <message>`: KEYS[1] the counter; ARGV[1] the channel, ARGV[2] the message. */
const PUBLISH_SCRIPT = `
local n = redis.call('INCR', KEYS[1])
redis.call('PUBLISH', ARGV[1], n .. ' ' .. ARGV[2])
return n
`;

type PublishingRedis = Redis & {
  palisadePublishChange(counter: string, channel: string, message: string): Promise<number>;
};

function publishing(redis: Redis): PublishingRedis {
  if (!('palisadePublishChange' in redis))
    redis.defineCommand('palisadePublishChange', { numberOfKeys: 1, lua: PUBLISH_SCRIPT });
  return redis as PublishingRedis;
}

/** A Redis pub/sub channel and a counter key, both under PALISADE_REDIS_PREFIX. */
export function redisTransport(config: Pick<ConsoleConfig, 'redisUrl' | 'redisPrefix'>): Transport {
  const channel = `${config.redisPrefix}:changes`;
  const counter = `${config.redisPrefix}:changes:n`;
  let shared: PublishingRedis | null = null;
  let sub: Redis | null = null;
  return {
    async send(text) {
      if (shared) {
        await shared.palisadePublishChange(counter, channel, text);
        return;
      }
      // A process that never listened (the admin CLI): one connection for this message.
      const once = new Redis(config.redisUrl!, { maxRetriesPerRequest: 2, lazyConnect: true });
      try {
        await once.connect();
        await publishing(once).palisadePublishChange(counter, channel, text);
      } finally {
        once.disconnect();
      }
    },
    // Only a listening process answers from memory; before it listens nothing is trusted anyway.
    readCounter: async () => (shared ? Number((await shared.get(counter)) ?? 0) : 0),
    async listen(subscriber, redis) {
      if (!redis) return;
      shared = publishing(redis);
      const s = redis.duplicate();
      sub = s;
      let live = false;
      s.on('message', (_channel: string, text: string) => subscriber.receive(text));
      s.on('close', () => {
        live = false;
        subscriber.lost();
      });
      const subscribe = () =>
        s
          .subscribe(channel)
          .then(() => redis.get(counter))
          .then((n) => {
            live = true;
            subscriber.live(Number(n ?? 0));
          }, noop);
      // ioredis subscribes again after reconnecting, then emits `ready`; a SUBSCRIBE of our own is
      // answered after its, so reading from memory starts again only once subscribed.
      s.on('ready', () => {
        if (!live && sub) subscribe();
      });
      s.on('error', noop); // it reconnects by itself; `close` has already stopped reading from memory
      // Not awaited: a console starts while Redis is down, and reads from memory once subscribed.
      subscribe();
    },
    async close() {
      const s = sub;
      sub = null;
      s?.disconnect();
    },
  };
}

/** PostgreSQL LISTEN/NOTIFY on a channel of the schema, and the `change_counter` row (migration 0021). */
export function postgresTransport(
  db: Database,
  config: Pick<ConsoleConfig, 'databaseUrl' | 'databaseSchema'>,
): Transport {
  // NOTIFY channels are database-wide: one per schema, so consoles on other schemas are not disturbed.
  const channel = `palisade_changes_${createHash('sha256')
    .update(config.databaseSchema ?? 'public')
    .digest('hex')
    .slice(0, 16)}`;
  let client: pg.Client | null = null;
  let timer: NodeJS.Timeout | null = null;
  let closed = false;
  return {
    send: async (text) => {
      await publishChange(db, channel, text);
    },
    sendWith: (text) => publishChangeWith(channel, text),
    readCounter: () => currentChange(db),
    counterInDatabase: true,
    async listen(subscriber) {
      const connect = async () => {
        timer = null;
        const c = new pg.Client({ connectionString: config.databaseUrl! });
        c.on('notification', (n) => {
          if (n.channel === channel && n.payload !== undefined) subscriber.receive(n.payload);
        });
        const lost = () => {
          subscriber.lost();
          c.removeAllListeners('end');
          c.end().catch(noop);
          if (client === c) client = null;
          if (!closed && !timer) timer = setTimeout(connect, RECONNECT_MS).unref();
        };
        c.on('error', lost);
        c.on('end', lost);
        try {
          await c.connect();
          await c.query(`LISTEN "${channel}"`);
          client = c;
          subscriber.live(await currentChange(db));
        } catch {
          lost();
        }
      };
      await connect();
    },
    async close() {
      closed = true;
      if (timer) clearTimeout(timer);
      const c = client;
      client = null;
      if (c) {
        c.removeAllListeners('end');
        await c.end().catch(noop);
      }
    },
  };
}

function noop() {}
