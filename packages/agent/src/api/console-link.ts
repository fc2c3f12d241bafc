import {
  LINK_MAX_ANSWER_BYTES,
  LINK_MAX_FRAME_BYTES,
  LINK_REFUSED_CODE,
  type LinkFrame,
  type LinkRequest,
  linkProof,
  linkTimers,
  linkUrl,
  parseLinkFrame,
} from '@palisade/protocol/link/standalone';
import type { WebSocket } from 'ws';
import { jittered, nextDelayS } from '../checkin/checkin.js';
import type { Log } from '../log.js';
import { type ApiAnswer, type ApiCall, bufferedBody } from './server.js';

/** The `link` part of `info` (the control socket's /status). */
export interface ConsoleLinkStatus {
  mode: 'direct' | 'outbound';
  state: 'off' | 'connecting' | 'up' | 'backing_off';
  console_url: string | null;
  connected_at: number | null;
  last_error: string | null;
  consecutive_failures: number;
}

export interface ConsoleLink {
  /** Keeps the link to this console open (`outbound`), or closes it (`direct`, or not enrolled: null). */
  configure(mode: 'direct' | 'outbound', enrolment: { console_url: string; token: string } | null): void;
  stop(): void;
  status(): ConsoleLinkStatus;
}

/**
 * `console.connect = outbound` (docs/agent.md, "Outbound link"): the agent keeps one WebSocket to
 * its console, authenticated with its daemon token, and answers each request frame by handing it to
 * its own API (`handle`: the same key check, whitelist and routes as a call on its port), with the
 * console's address as the caller. A link that closes is opened again after 5 s, doubling up to the
 * check-in interval, with jitter; a link silent for `timers.deadAfterMs` (25 s by default) is closed. The console's
 * first frame is a challenge: the agent answers it with linkProof() keyed by its key's SHA-256, so
 * the console knows this end holds the agent key before it sends anything else.
 */
export function createConsoleLink(o: {
  handle: (call: ApiCall) => Promise<ApiAnswer>;
  /** The SHA-256 of the current agent key (state/agent-key.ts), to answer the console's challenge; null: none yet. */
  keySha256: () => string | null;
  intervalS: () => number;
  /** `console.link_heartbeat_ms`: the heartbeat, and with it when a silent link is dead (linkTimers()). */
  heartbeatMs?: number;
  clock: () => number;
  log: Log;
}): ConsoleLink {
  const { log, clock } = o;
  const timers = linkTimers(o.heartbeatMs);
  const status: ConsoleLinkStatus = {
    mode: 'direct',
    state: 'off',
    console_url: null,
    connected_at: null,
    last_error: null,
    consecutive_failures: 0,
  };
  let target: { console_url: string; token: string } | null = null;
  let socket: WebSocket | null = null;
  let retry: NodeJS.Timeout | null = null;
  let generation = 0;
  // ws is loaded with the first link, so an agent that never opens one does not carry it (docs/performance.md).
  let WebSocketClass: typeof WebSocket | null = null;

  function close() {
    generation++;
    if (retry) clearTimeout(retry);
    retry = null;
    socket?.terminate();
    socket = null;
    status.state = 'off';
    status.connected_at = null;
  }

  function backOff(gen: number) {
    if (gen !== generation || !target) return;
    status.consecutive_failures++;
    status.state = 'backing_off';
    const ms = jittered(nextDelayS(o.intervalS(), status.consecutive_failures) * 1000);
    retry = setTimeout(() => connect(gen), ms);
    retry.unref();
  }

  async function serve(ws: WebSocket, frame: LinkRequest, remoteAddress: string | undefined) {
    const answer = await o.handle({
      method: frame.method,
      url: frame.query ? `${frame.path}?${frame.query}` : frame.path,
      authorization: frame.authorization,
      remoteAddress,
      readBody: bufferedBody(frame.body === null ? null : Buffer.from(frame.body, 'base64')),
    });
    const body = Buffer.from(answer.body);
    const reply: LinkFrame =
      body.length > LINK_MAX_ANSWER_BYTES
        ? { type: 'too_large', id: frame.id, bytes: body.length }
        : {
            type: 'response',
            id: frame.id,
            status: answer.status,
            content_type: answer.type,
            body: body.toString('base64'),
          };
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(reply));
  }

  function connect(gen: number) {
    if (gen !== generation || !target) return;
    retry = null;
    status.state = 'connecting';
    if (!WebSocketClass) {
      import('ws').then(
        (m) => {
          WebSocketClass = m.WebSocket;
          connect(gen);
        },
        (err: Error) => {
          status.last_error = `ws not loaded: ${err.message}`;
          backOff(gen);
        },
      );
      return;
    }
    const ws = new WebSocketClass(linkUrl(target.console_url), {
      headers: { authorization: `Bearer ${target.token}`, 'user-agent': 'palisade-agent' },
      maxPayload: LINK_MAX_FRAME_BYTES,
      perMessageDeflate: false,
      handshakeTimeout: 10_000,
    });
    socket = ws;
    let remoteAddress: string | undefined;
    let lastHeard = clock();
    let heartbeat: NodeJS.Timeout | null = null;
    ws.on('upgrade', (res) => {
      remoteAddress = res.socket.remoteAddress;
    });
    let refused = false;
    ws.on('unexpected-response', (_req, res) => {
      refused = true;
      status.last_error = `the console refused the link: HTTP ${res.statusCode}${res.statusCode === 401 ? ' (the daemon token is not valid: enrol the agent again)' : ''}`;
      // The console's `{"error": …}` says why (409: the account has not switched the server to outbound).
      let text = '';
      res.on('data', (chunk: Buffer) => {
        if (text.length < 1024) text += chunk.toString();
      });
      res.on('end', () => {
        try {
          const error = (JSON.parse(text) as { error?: unknown }).error;
          if (typeof error === 'string') status.last_error += `: ${error.slice(0, 300)}`;
        } catch {
          // not JSON: the status alone
        }
        ws.terminate();
      });
      res.on('error', () => ws.terminate());
    });
    ws.on('open', () => {
      status.state = 'up';
      status.connected_at = clock();
      status.consecutive_failures = 0;
      status.last_error = null;
      log('info', `outbound link to ${target?.console_url} is up`);
      heartbeat = setInterval(() => {
        if (clock() - lastHeard > timers.deadAfterMs) {
          status.last_error = `nothing from the console for ${timers.deadAfterMs / 1000} s`;
          ws.terminate();
          return;
        }
        ws.send(JSON.stringify({ type: 'heartbeat', ts: clock() }));
      }, timers.heartbeatMs);
      heartbeat.unref();
    });
    ws.on('message', (data, isBinary) => {
      lastHeard = clock();
      const frame = isBinary ? null : parseLinkFrame(data.toString());
      if (!frame) {
        status.last_error = 'the console sent something that is not a link frame';
        ws.terminate();
        return;
      }
      if (frame.type === 'challenge') {
        const key = o.keySha256();
        if (!key) {
          status.last_error = 'no agent key yet to prove the link with: run palisade-agent key';
          ws.terminate();
          return;
        }
        ws.send(JSON.stringify({ type: 'proof', proof: linkProof(key, frame.nonce) } satisfies LinkFrame));
        return;
      }
      if (frame.type !== 'request') return;
      serve(ws, frame, remoteAddress).catch((err: Error) => log('error', `link request failed: ${err.message}`));
    });
    ws.on('error', (err) => {
      if (!refused) status.last_error = err.message;
    });
    ws.on('close', (code, reason) => {
      if (heartbeat) clearInterval(heartbeat);
      if (code === LINK_REFUSED_CODE) status.last_error = `the console closed the link: ${reason.toString()}`;
      if (gen !== generation) return;
      socket = null;
      if (status.state === 'up') log('warn', `outbound link to ${target?.console_url} closed; opening it again`);
      status.connected_at = null;
      backOff(gen);
    });
  }

  return {
    configure(mode, enrolment) {
      status.mode = mode;
      const next = mode === 'outbound' ? enrolment : null;
      if (next && target && next.console_url === target.console_url && next.token === target.token && socket) return;
      close();
      target = next;
      status.console_url = next?.console_url ?? null;
      status.consecutive_failures = 0;
      if (next) connect(generation);
    },
    stop() {
      target = null;
      close();
    },
    status: () => ({ ...status }),
  };
}
