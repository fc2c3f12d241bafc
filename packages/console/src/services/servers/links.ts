import { randomBytes } from 'node:crypto';
import {
  LINK_DEAD_AFTER_MS,
  LINK_HEARTBEAT_MS,
  LINK_MAX_ANSWER_BYTES,
  LINK_MAX_IN_FLIGHT,
  LINK_MAX_REQUEST_BODY_BYTES,
  type LinkRequest,
  parseLinkFrame,
} from '@palisade/protocol/link';
import type { Redis } from 'ioredis';
import type { WebSocket } from 'ws';
import { OutboundError, type OutboundResponse } from '../../outbound/guarded-client.js';

/** One call down a link: what agent-client.ts would have sent over HTTP. */
export interface LinkCall {
  method: string;
  path: string;
  query: string;
  authorization: string;
  body?: Buffer | string;
  timeoutMs: number;
}

/** The state of a server's link as this process sees it (docs/fleet.md, "Outbound link"). */
export interface LinkState {
  mode: 'direct' | 'outbound';
  /** null for a direct server; `up` while a link is held here, else `down`. */
  link: 'up' | 'down' | null;
  since: number | null;
}

interface Pending {
  resolve: (res: OutboundResponse) => void;
  reject: (err: OutboundError) => void;
  timer: NodeJS.Timeout;
}

interface Link {
  socket: WebSocket;
  pending: Map<string, Pending>;
  call(call: LinkCall): Promise<OutboundResponse>;
  close(reason: string): void;
}

export type LinkLog = (level: 'info' | 'warn', message: string) => void;

/**
 * The outbound links held by this console process, one per server: a newer link replaces the older
 * (which is closed), calls wait for their answer by id, and a link that sent nothing for
 * LINK_DEAD_AFTER_MS is closed, failing its calls as "agent unreachable".
 */
/** A call relayed to the process holding the link, and its answer (docs/deploy.md, "Outbound links and several processes"). */
interface RelayedCall {
  rid: string;
  from: string;
  serverId: number;
  call: Omit<LinkCall, 'body'> & { body: string | null };
}
type RelayedAnswer =
  | { rid: string; status: number; content_type: string; body: string }
  | { rid: string; failure: OutboundError['kind']; message: string };

export function createLinkRegistry(clock: () => number = Date.now) {
  const links = new Map<number, Link>();
  /** Set by relayThrough(): announces the links held here and carries calls between processes. */
  let relay: {
    redis: Redis;
    holderKey: (serverId: number) => string;
    send: (call: LinkCall, holder: string, serverId: number) => Promise<OutboundResponse>;
    announce: (serverId: number) => void;
    retract: (serverId: number) => void;
  } | null = null;
  /** Servers that held a link in this process, and when it last came up or went down. */
  const seen = new Map<number, { up: boolean; since: number }>();

  /** Holds a new link for the server (its daemon token checked by the caller); `log` says what became of links. */
  function attach(serverId: number, serverName: string, socket: WebSocket, log: LinkLog) {
    const older = links.get(serverId);
    if (older) {
      log('info', `server "${serverName}" opened a new link; the older one is closed`);
      older.close('replaced by a newer link');
    }
    const pending = new Map<string, Pending>();
    let lastHeard = clock();
    const failAll = (message: string) => {
      for (const [id, p] of pending) {
        clearTimeout(p.timer);
        pending.delete(id);
        p.reject(new OutboundError('unreachable', message));
      }
    };
    const heartbeat = setInterval(() => {
      relay?.announce(serverId);
      if (clock() - lastHeard > LINK_DEAD_AFTER_MS) {
        log('warn', `server "${serverName}": nothing on its link for ${LINK_DEAD_AFTER_MS / 1000} s; closed`);
        socket.terminate();
        return;
      }
      socket.send(JSON.stringify({ type: 'heartbeat', ts: clock() }));
    }, LINK_HEARTBEAT_MS);
    heartbeat.unref();

    const link: Link = {
      socket,
      pending,
      call(c) {
        if (pending.size >= LINK_MAX_IN_FLIGHT)
          return Promise.reject(
            new OutboundError('unreachable', `${LINK_MAX_IN_FLIGHT} calls already wait on the link`),
          );
        const body = c.body === undefined ? null : Buffer.from(c.body);
        if (body && body.length > LINK_MAX_REQUEST_BODY_BYTES)
          return Promise.reject(
            new OutboundError('refused', `the body is larger than the ${LINK_MAX_REQUEST_BODY_BYTES} byte limit`),
          );
        const id = randomBytes(9).toString('base64url');
        const frame: LinkRequest = {
          type: 'request',
          id,
          method: c.method as LinkRequest['method'],
          path: c.path,
          query: c.query,
          authorization: c.authorization,
          body: body ? body.toString('base64') : null,
        };
        return new Promise<OutboundResponse>((resolve, reject) => {
          const timer = setTimeout(() => {
            pending.delete(id);
            reject(new OutboundError('timeout', `no answer within ${c.timeoutMs} ms`));
          }, c.timeoutMs);
          pending.set(id, { resolve, reject, timer });
          socket.send(JSON.stringify(frame), (err) => {
            if (!err || !pending.has(id)) return;
            clearTimeout(timer);
            pending.delete(id);
            reject(new OutboundError('unreachable', 'the link closed'));
          });
        });
      },
      close(reason) {
        socket.close(1000, reason);
        socket.terminate();
      },
    };
    links.set(serverId, link);
    seen.set(serverId, { up: true, since: clock() });
    relay?.announce(serverId);
    log('info', `server "${serverName}" connected its outbound link`);

    socket.on('message', (data, isBinary) => {
      lastHeard = clock();
      const frame = isBinary ? null : parseLinkFrame(data.toString());
      if (!frame) {
        log('warn', `server "${serverName}" sent something that is not a link frame; the link is closed`);
        socket.terminate();
        return;
      }
      if (frame.type === 'heartbeat' || frame.type === 'request') return; // requests go the other way only
      const waiting = pending.get(frame.id);
      if (!waiting) return; // answered after its timeout
      pending.delete(frame.id);
      clearTimeout(waiting.timer);
      if (frame.type === 'too_large') {
        waiting.reject(new OutboundError('too_large', `the answer was larger than ${LINK_MAX_ANSWER_BYTES} bytes`));
        return;
      }
      const body = Buffer.from(frame.body, 'base64');
      if (body.length > LINK_MAX_ANSWER_BYTES) {
        waiting.reject(new OutboundError('too_large', `the answer was larger than ${LINK_MAX_ANSWER_BYTES} bytes`));
        return;
      }
      waiting.resolve({ status: frame.status, headers: { 'content-type': frame.content_type }, body });
    });
    socket.on('close', () => {
      clearInterval(heartbeat);
      failAll('the link closed');
      if (links.get(serverId) === link) {
        links.delete(serverId);
        seen.set(serverId, { up: false, since: clock() });
        relay?.retract(serverId);
        log('info', `server "${serverName}": its outbound link closed`);
      }
    });
    socket.on('error', () => socket.terminate());
  }

  /** The link as this process saw it: `direct` when no link of the server ever ended here. */
  function state(serverId: number): LinkState {
    const s = seen.get(serverId);
    if (!s) return { mode: 'direct', link: null, since: null };
    return { mode: 'outbound', link: s.up ? 'up' : 'down', since: s.since };
  }

  return {
    attach,
    /**
     * The call over this server's link: the one held here, else (with Redis) the one another process
     * announced, relayed to it; null when no process holds one.
     */
    async caller(serverId: number | undefined): Promise<((call: LinkCall) => Promise<OutboundResponse>) | null> {
      if (serverId === undefined) return null;
      const link = links.get(serverId);
      if (link) return (c) => link.call(c);
      if (!relay) return null;
      const r = relay;
      const holder = await r.redis.get(r.holderKey(serverId)).catch(() => null);
      return holder ? (c) => r.send(c, holder, serverId) : null;
    },

    /**
     * With several console processes: each announces the links it holds in Redis (renewed with each
     * heartbeat) and serves calls other processes relay to it over pub/sub (docs/deploy.md).
     */
    relayThrough(redis: Redis, prefix: string, log: LinkLog) {
      const me = randomBytes(8).toString('hex');
      const channel = (process: string) => `${prefix}:link-relay:${process}`;
      const holderKey = (serverId: number) => `${prefix}:link-holder:${serverId}`;
      const waiting = new Map<string, { resolve: (a: RelayedAnswer) => void; timer: NodeJS.Timeout }>();
      const sub = redis.duplicate();
      // Not awaited: a console starts while Redis is down, and relays once it is back.
      sub.subscribe(channel(me)).catch((err: Error) => log('warn', `link relay not subscribed: ${err.message}`));
      const publish = (to: string, message: RelayedCall | RelayedAnswer) =>
        redis.publish(channel(to), JSON.stringify(message)).catch(() => 0);

      async function serve(m: RelayedCall) {
        const link = links.get(m.serverId);
        if (!link) return publish(m.from, { rid: m.rid, failure: 'unreachable', message: 'the link moved' });
        try {
          const { body, ...call } = m.call;
          const res = await link.call({ ...call, ...(body !== null ? { body: Buffer.from(body, 'base64') } : {}) });
          return publish(m.from, {
            rid: m.rid,
            status: res.status,
            content_type: String(res.headers['content-type'] ?? ''),
            body: res.body.toString('base64'),
          });
        } catch (err) {
          const e = err instanceof OutboundError ? err : new OutboundError('unreachable', 'the link failed');
          return publish(m.from, { rid: m.rid, failure: e.kind, message: e.message });
        }
      }

      sub.on('message', (_channel: string, text: string) => {
        let m: RelayedCall | RelayedAnswer;
        try {
          m = JSON.parse(text) as RelayedCall | RelayedAnswer;
        } catch {
          return;
        }
        if ('from' in m) {
          void serve(m);
          return;
        }
        const w = waiting.get(m.rid);
        if (!w) return;
        waiting.delete(m.rid);
        clearTimeout(w.timer);
        w.resolve(m);
      });

      relay = {
        redis,
        holderKey,
        announce: (serverId) =>
          void redis.set(holderKey(serverId), me, 'PX', LINK_DEAD_AFTER_MS + LINK_HEARTBEAT_MS).catch(() => {}),
        retract: (serverId) =>
          void redis
            .eval(
              "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0",
              1,
              holderKey(serverId),
              me,
            )
            .catch(() => {}),
        async send(c, holder, serverId) {
          const rid = randomBytes(9).toString('base64url');
          const answer = new Promise<RelayedAnswer>((resolve) => {
            const timer = setTimeout(() => {
              waiting.delete(rid);
              resolve({ rid, failure: 'timeout', message: `no answer within ${c.timeoutMs} ms` });
            }, c.timeoutMs);
            waiting.set(rid, { resolve, timer });
          });
          const { body, ...call } = c;
          await publish(holder, {
            rid,
            from: me,
            serverId,
            call: { ...call, body: body === undefined ? null : Buffer.from(body).toString('base64') },
          });
          const a = await answer;
          if ('failure' in a) throw new OutboundError(a.failure, a.message);
          return { status: a.status, headers: { 'content-type': a.content_type }, body: Buffer.from(a.body, 'base64') };
        },
      };
      for (const serverId of links.keys()) relay.announce(serverId);
      log('info', `outbound links relayed through Redis as process ${me}`);
      return async () => {
        relay = null;
        for (const w of waiting.values()) clearTimeout(w.timer);
        sub.disconnect();
      };
    },
    state,
    /** state(), or, when another process announced the link in Redis, `outbound`/`up` (since unknown here). */
    async stateAnywhere(serverId: number): Promise<LinkState> {
      const local = state(serverId);
      if (local.link === 'up' || !relay) return local;
      const holder = await relay.redis.get(relay.holderKey(serverId)).catch(() => null);
      return holder ? { mode: 'outbound', link: 'up', since: null } : local;
    },
    /** A server's link is dropped (the server was deleted or its daemon token replaced). */
    drop(serverId: number) {
      links.get(serverId)?.close('the server was removed or enrolled again');
      seen.delete(serverId);
    },
    size: () => links.size,
    closeAll() {
      for (const link of links.values()) link.close('the console is stopping');
    },
  };
}

export type LinkRegistry = ReturnType<typeof createLinkRegistry>;
