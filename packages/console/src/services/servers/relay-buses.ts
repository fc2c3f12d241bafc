import type { Redis } from 'ioredis';
import pg from 'pg';
import type { Database } from '../../db/schema.js';
import {
  claimLink,
  findLinkHolder,
  insertRelayMessage,
  notify,
  purgeLinkRelay,
  releaseLink,
  renewLinks,
  takeRelayMessage,
} from '../../repositories/link-relay.repository.js';
import { LINK_HOLD_MS, type LinkLog, type RelayBus } from './links.js';

/**
 * Redis: each process subscribes to its own channel; `<prefix>:link-holder:<server>` names the
 * process holding that server's link, expiring unless renewed.
 */
export function redisRelayBus(redis: Redis, prefix: string, log: LinkLog): RelayBus {
  const channel = (process: string) => `${prefix}:link-relay:${process}`;
  const holderKey = (serverId: number) => `${prefix}:link-holder:${serverId}`;
  const sub = redis.duplicate();
  return {
    name: 'Redis',
    listen(me, onMessage) {
      // Not awaited: a console starts while Redis is down, and relays once it is back.
      sub.subscribe(channel(me)).catch((err: Error) => log('warn', `link relay not subscribed: ${err.message}`));
      sub.on('message', (_channel: string, text: string) => onMessage(text));
    },
    async send(to, text) {
      await redis.publish(channel(to), text).catch(() => 0);
    },
    holder: (serverId) => redis.get(holderKey(serverId)).catch(() => null),
    claim(serverId, me) {
      void redis.set(holderKey(serverId), me, 'PX', LINK_HOLD_MS).catch(() => {});
    },
    renew(me, serverIds) {
      if (serverIds.length === 0) return;
      const batch = redis.pipeline();
      for (const id of serverIds) batch.set(holderKey(id), me, 'PX', LINK_HOLD_MS);
      void batch.exec().catch(() => {});
    },
    release(serverId, me) {
      void redis
        .eval(
          "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0",
          1,
          holderKey(serverId),
          me,
        )
        .catch(() => {});
    },
    async close() {
      sub.disconnect();
    },
  };
}

/** A NOTIFY payload must stay under 8000 bytes; a longer message goes through link_relay_messages. */
const NOTIFY_MAX_BYTES = 7000;
/** Messages nobody read (their receiver stopped) are removed after this long. */
const MESSAGE_TTL_MS = 60_000;
const RELISTEN_MS = 1000;

/**
 * PostgreSQL, when no Redis is configured (docs/deploy.md, "Outbound links and several
 * processes"): each process LISTENs on `palisade_link_<process>` on a connection of its own and is
 * sent NOTIFYs; a message too long for a payload is stored in link_relay_messages and its id sent
 * instead (the receiver deletes it as it reads it). `link_holders` names the holder of each link.
 */
export function postgresRelayBus(
  db: Database,
  settings: { databaseUrl: string; clock: () => number },
  log: LinkLog,
): RelayBus {
  const { clock } = settings;
  const channel = (process: string) => `palisade_link_${process}`;
  let client: pg.Client | null = null;
  let closed = false;
  let retry: NodeJS.Timeout | null = null;

  async function read(payload: string): Promise<string | null> {
    if (!payload.startsWith('@')) return payload;
    const id = Number(payload.slice(1));
    if (!Number.isSafeInteger(id)) return null;
    return takeRelayMessage(db, id).catch(() => null);
  }

  function listen(me: string, onMessage: (text: string) => void) {
    if (closed) return;
    // LISTEN holds its connection: not one of the pool's. The channel is the process's own, so the
    // schema need not be named (NOTIFY reaches every session of the database).
    const c = new pg.Client({ connectionString: settings.databaseUrl });
    client = c;
    const again = (err: Error) => {
      if (client !== c) return;
      client = null;
      void c.end().catch(() => {});
      if (closed) return;
      log('warn', `link relay: PostgreSQL listener lost (${err.message}); listening again`);
      retry = setTimeout(() => listen(me, onMessage), RELISTEN_MS);
      retry.unref();
    };
    c.on('error', again);
    c.on('notification', (n) => {
      if (n.channel !== channel(me) || !n.payload) return;
      void read(n.payload).then((text) => text !== null && onMessage(text));
    });
    c.connect()
      .then(() => c.query(`LISTEN ${channel(me)}`))
      .catch(again);
  }

  return {
    name: 'PostgreSQL LISTEN/NOTIFY',
    listen,
    async send(to, text) {
      try {
        const payload =
          Buffer.byteLength(text) > NOTIFY_MAX_BYTES ? `@${await insertRelayMessage(db, text, clock())}` : text;
        await notify(db, channel(to), payload);
      } catch {
        // The database is down: the caller's call times out as "agent unreachable".
      }
    },
    holder: (serverId) => findLinkHolder(db, serverId, clock()).catch(() => null),
    claim(serverId, me) {
      void claimLink(db, serverId, me, clock() + LINK_HOLD_MS).catch(() => {});
    },
    renew(me, serverIds) {
      const now = clock();
      // One statement for all the links held here, whatever their number; then what nobody reads.
      void (async () => {
        if (serverIds.length > 0) await renewLinks(db, me, now + LINK_HOLD_MS);
        await purgeLinkRelay(db, now - LINK_HOLD_MS, now - MESSAGE_TTL_MS);
      })().catch(() => {});
    },
    release(serverId, me) {
      void releaseLink(db, serverId, me).catch(() => {});
    },
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      const c = client;
      client = null;
      await c?.end().catch(() => {});
    },
  };
}
