import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  LINK_DEAD_AFTER_MS,
  LINK_HEARTBEAT_MS,
  LINK_LATE_ANSWER_MS,
  LINK_MAX_ANSWER_BYTES,
  LINK_MAX_BYTES_PER_SECOND,
  LINK_MAX_IN_FLIGHT,
  LINK_MAX_REQUEST_BODY_BYTES,
  LINK_MAX_SMALL_FRAME_BYTES,
  LINK_PROOF_TIMEOUT_MS,
  LINK_REFUSED_CODE,
  type LinkChallenge,
  type LinkRequest,
  linkProof,
  linkTimers,
  parseLinkFrame,
} from '@palisade/protocol/link';
import type { WebSocket } from 'ws';
import { OutboundError, type OutboundResponse } from '../../outbound/guarded-client.js';
import type { SecretBox } from '../../secrets.js';

/** One call down a link: what agent-client.ts would have sent over HTTP. */
export interface LinkCall {
  method: string;
  path: string;
  query: string;
  authorization: string;
  body?: Buffer | string;
  timeoutMs: number;
}

const safeHexEqual = (a: string, b: string) =>
  a.length === b.length && timingSafeEqual(Buffer.from(a, 'hex'), Buffer.from(b, 'hex'));

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

/** A call relayed to the process holding the link, and its answer (docs/deploy.md, "Outbound links and several processes"). */
interface RelayedCall {
  rid: string;
  from: string;
  serverId: number;
  /** The Authorization header sealed with the console's secret key: the agent key never crosses the bus in clear. */
  call: Omit<LinkCall, 'body' | 'authorization'> & { body: string | null; sealed: string };
}
type RelayedAnswer =
  | { rid: string; status: number; content_type: string; body: string }
  | { rid: string; failure: OutboundError['kind']; message: string };

/** How long a process's claim on a link lasts unless renewed: it renews with every heartbeat. */
export const LINK_HOLD_MS = LINK_DEAD_AFTER_MS + LINK_HEARTBEAT_MS;

/**
 * What carries calls between console processes and says which one holds a link: Redis pub/sub, or
 * PostgreSQL LISTEN/NOTIFY (relay-buses.ts). Every method is best effort: a bus that is down makes
 * a relayed call fail as "agent unreachable", never the process.
 */
export interface RelayBus {
  readonly name: string;
  /** Delivers the messages sent to this process. */
  listen(me: string, onMessage: (text: string) => void): void;
  send(to: string, text: string): Promise<void>;
  /** The process holding the server's link, or null. */
  holder(serverId: number): Promise<string | null>;
  /** This process holds the server's link now (the newest link wins). */
  claim(serverId: number, me: string): void;
  /** This process still holds these links. */
  renew(me: string, serverIds: number[]): void;
  /** This process no longer holds the server's link (unless another claimed it meanwhile). */
  release(serverId: number, me: string): void;
  close(): Promise<void>;
}

/**
 * The outbound links held by this console process, one per server: a newer link replaces the older
 * (which is closed), calls wait for their answer by id, and a link that sent nothing for
 * `timers.deadAfterMs` (PALISADE_LINK_HEARTBEAT_MS × 2.5) is closed, failing its calls as "agent unreachable".
 */
export function createLinkRegistry(clock: () => number = Date.now, heartbeatMs = LINK_HEARTBEAT_MS) {
  const timers = linkTimers(heartbeatMs);
  const links = new Map<number, Link>();
  /** Set by relayThrough(): claims the links held here on the bus and carries calls between processes. */
  let relay: {
    bus: RelayBus;
    me: string;
    send: (call: LinkCall, holder: string, serverId: number) => Promise<OutboundResponse>;
  } | null = null;
  /** Servers that held a link in this process, and when it last came up or went down. */
  const seen = new Map<number, { up: boolean; since: number }>();

  /**
   * Takes a new link for the server (its daemon token checked by the caller). Nothing goes down it
   * until its end proved it holds the server's agent key (a challenge answered with linkProof(),
   * keyed by the SHA-256 of the key this console holds for the server): only then is it held here,
   * replacing an older one, and `verified` is called. A link that fails the proof, does not answer
   * within LINK_PROOF_TIMEOUT_MS or sends anything else first is closed and logged. `log` says what
   * became of links.
   */
  function attach(
    serverId: number,
    serverName: string,
    socket: WebSocket,
    log: LinkLog,
    proof: { keySha256: string | null; verified: () => void },
  ) {
    const pending = new Map<string, Pending>();
    /** Ids of calls that timed out, and until when their late answer is still expected. */
    const late = new Map<string, number>();
    let lastHeard = clock();
    let verified = false;
    let heartbeats: number[] = [];
    let second = { start: clock(), bytes: 0 };
    let resume: NodeJS.Timeout | null = null;
    const nonce = randomBytes(32).toString('base64url');
    const failAll = (message: string) => {
      for (const [id, p] of pending) {
        clearTimeout(p.timer);
        pending.delete(id);
        p.reject(new OutboundError('unreachable', message));
      }
    };
    /** Closes a link that broke the rules, saying why in the log (and to the other end, in the close frame). */
    let refused = false;
    const refuse = (why: string) => {
      refused = true;
      log('warn', `server "${serverName}": ${why}; the link is closed`);
      socket.close(LINK_REFUSED_CODE, why.slice(0, 120));
      socket.terminate();
    };
    const proofTimer = setTimeout(() => {
      if (!verified) refuse(`no proof of the agent key within ${LINK_PROOF_TIMEOUT_MS / 1000} s`);
    }, LINK_PROOF_TIMEOUT_MS);
    proofTimer.unref();
    const heartbeat = setInterval(() => {
      if (clock() - lastHeard > timers.deadAfterMs) {
        log('warn', `server "${serverName}": nothing on its link for ${timers.deadAfterMs / 1000} s; closed`);
        socket.terminate();
        return;
      }
      if (verified) socket.send(JSON.stringify({ type: 'heartbeat', ts: clock() }));
    }, timers.heartbeatMs);
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
            expectLate(id);
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

    /** A call timed out: its answer may still come, and is dropped then (the list is bounded; the oldest go first). */
    function expectLate(id: string) {
      const now = clock();
      for (const [old, until] of late) if (until < now || late.size >= LINK_MAX_IN_FLIGHT * 4) late.delete(old);
      late.set(id, now + LINK_LATE_ANSWER_MS);
    }

    /** The link proved the key: it is held here from now on (the newest verified link wins). */
    function hold() {
      verified = true;
      clearTimeout(proofTimer);
      const older = links.get(serverId);
      if (older) {
        log('info', `server "${serverName}" opened a new link; the older one is closed`);
        older.close('replaced by a newer link');
      }
      links.set(serverId, link);
      seen.set(serverId, { up: true, since: clock() });
      relay?.bus.claim(serverId, relay.me);
      log('info', `server "${serverName}" connected its outbound link`);
      proof.verified();
    }

    /** Bytes read this second; past LINK_MAX_BYTES_PER_SECOND the link is not read until the next second. */
    function meter(bytes: number) {
      const now = clock();
      if (now - second.start >= 1000) second = { start: now, bytes: 0 };
      second.bytes += bytes;
      if (second.bytes <= LINK_MAX_BYTES_PER_SECOND || resume) return;
      socket.pause();
      resume = setTimeout(
        () => {
          resume = null;
          second = { start: clock(), bytes: 0 };
          socket.resume();
        },
        Math.max(1, 1000 - (now - second.start)),
      );
      resume.unref();
    }

    socket.on('message', (raw, isBinary) => {
      if (refused) return;
      const data = raw as Buffer;
      lastHeard = clock();
      meter(data.length);
      // Only an answer to a call waiting here may be large: anything else that size is refused unread.
      if (isBinary || (data.length > LINK_MAX_SMALL_FRAME_BYTES && (!verified || pending.size === 0))) {
        refuse(`sent a ${isBinary ? 'binary' : `${data.length} byte`} frame nobody asked for`);
        return;
      }
      const frame = parseLinkFrame(data.toString());
      if (!frame) {
        refuse('sent something that is not a link frame');
        return;
      }
      if (!verified) {
        if (frame.type !== 'proof') {
          refuse(`sent a ${frame.type} frame before proving it holds the agent key`);
          return;
        }
        if (!proof.keySha256 || !safeHexEqual(frame.proof, linkProof(proof.keySha256, nonce))) {
          refuse('failed the proof of the agent key (the agent key saved on the console is not this agent’s)');
          return;
        }
        hold();
        return;
      }
      if (frame.type === 'heartbeat') {
        if (data.length > LINK_MAX_SMALL_FRAME_BYTES) {
          refuse('sent an oversized heartbeat');
          return;
        }
        const now = clock();
        heartbeats = heartbeats.filter((at) => now - at < 60_000);
        heartbeats.push(now);
        if (heartbeats.length > timers.maxHeartbeatsPerMinute)
          refuse(`sent more than ${timers.maxHeartbeatsPerMinute} heartbeats in a minute`);
        return;
      }
      if (frame.type !== 'response' && frame.type !== 'too_large') {
        refuse(`sent a ${frame.type} frame, which only goes the other way`);
        return;
      }
      const waiting = pending.get(frame.id);
      if (!waiting) {
        const expected = late.get(frame.id);
        late.delete(frame.id);
        if (expected === undefined || expected < clock()) refuse('answered a call nobody made');
        return; // a late answer to a call that timed out
      }
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
      clearTimeout(proofTimer);
      if (resume) clearTimeout(resume);
      failAll('the link closed');
      if (links.get(serverId) === link) {
        links.delete(serverId);
        seen.set(serverId, { up: false, since: clock() });
        relay?.bus.release(serverId, relay.me);
        log('info', `server "${serverName}": its outbound link closed`);
      }
    });
    socket.on('error', () => socket.terminate());
    const challenge: LinkChallenge = { type: 'challenge', nonce };
    socket.send(JSON.stringify(challenge));
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
     * The call over this server's link: the one held here, else (with a relay bus) the one another process
     * claimed, relayed to it; null when no process holds one.
     */
    async caller(serverId: number | undefined): Promise<((call: LinkCall) => Promise<OutboundResponse>) | null> {
      if (serverId === undefined) return null;
      const link = links.get(serverId);
      if (link) return (c) => link.call(c);
      if (!relay) return null;
      const r = relay;
      const holder = await r.bus.holder(serverId);
      return holder && holder !== r.me ? (c) => r.send(c, holder, serverId) : null;
    },

    /**
     * With several console processes: each claims the links it holds on the bus (renewed with each
     * heartbeat) and serves the calls other processes relay to it (docs/deploy.md). The agent key
     * of a relayed call is sealed with `secrets`, which every process of one console shares.
     */
    relayThrough(bus: RelayBus, secrets: Pick<SecretBox, 'seal' | 'open'>, log: LinkLog) {
      const me = randomBytes(8).toString('hex');
      const waiting = new Map<string, { resolve: (a: RelayedAnswer) => void; timer: NodeJS.Timeout }>();
      const publish = (to: string, message: RelayedCall | RelayedAnswer) => bus.send(to, JSON.stringify(message));

      async function serve(m: RelayedCall) {
        const link = links.get(m.serverId);
        if (!link) return publish(m.from, { rid: m.rid, failure: 'unreachable', message: 'the link moved' });
        try {
          const { body, sealed, ...call } = m.call;
          const res = await link.call({
            ...call,
            authorization: secrets.open(sealed),
            ...(body !== null ? { body: Buffer.from(body, 'base64') } : {}),
          });
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

      bus.listen(me, (text) => {
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
        bus,
        me,
        async send(c, holder, serverId) {
          const rid = randomBytes(9).toString('base64url');
          const answer = new Promise<RelayedAnswer>((resolve) => {
            const timer = setTimeout(() => {
              waiting.delete(rid);
              resolve({ rid, failure: 'timeout', message: `no answer within ${c.timeoutMs} ms` });
            }, c.timeoutMs);
            waiting.set(rid, { resolve, timer });
          });
          const { body, authorization, ...call } = c;
          await publish(holder, {
            rid,
            from: me,
            serverId,
            call: {
              ...call,
              sealed: secrets.seal(authorization),
              body: body === undefined ? null : Buffer.from(body).toString('base64'),
            },
          });
          const a = await answer;
          if ('failure' in a) throw new OutboundError(a.failure, a.message);
          return { status: a.status, headers: { 'content-type': a.content_type }, body: Buffer.from(a.body, 'base64') };
        },
      };
      for (const serverId of links.keys()) bus.claim(serverId, me);
      const renew = setInterval(() => bus.renew(me, [...links.keys()]), LINK_HEARTBEAT_MS);
      renew.unref();
      log('info', `outbound links relayed through ${bus.name} as process ${me}`);
      return async () => {
        relay = null;
        clearInterval(renew);
        for (const w of waiting.values()) clearTimeout(w.timer);
        await bus.close();
      };
    },
    state,
    /** state(), or, when another process claimed the link on the bus, `outbound`/`up` (since unknown here). */
    async stateAnywhere(serverId: number): Promise<LinkState> {
      const local = state(serverId);
      if (local.link === 'up' || !relay) return local;
      const holder = await relay.bus.holder(serverId);
      return holder && holder !== relay.me ? { mode: 'outbound', link: 'up', since: null } : local;
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
