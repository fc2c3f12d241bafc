import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { handOverWhenVerified, TlsPinError } from '@palisade/protocol/tls-pin';
import { checkAddress } from './target-policy.js';

export type OutboundFailure = 'refused' | 'unreachable' | 'timeout' | 'too_large' | 'tls';

/** A failed outgoing call; `message` is safe to show to the user (never a key or a header value). */
export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    message: string,
    /** For `tls`: the certificate the peer presented and the pin it was checked against. */
    readonly certificate: Pick<TlsPinError, 'presented' | 'expected' | 'untrusted'> | null = null,
  ) {
    super(message);
  }
}

export interface OutboundRequest {
  method: string;
  url: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  timeoutMs?: number;
  maxBytes?: number;
  /** For https: the SHA-256 fingerprint (`AB:CD:…`) the certificate must have, instead of a CA chain. */
  tlsFingerprint?: string | null;
}

export interface OutboundResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

export interface GuardedClient {
  request(req: OutboundRequest): Promise<OutboundResponse>;
  /** Parses and checks a URL (scheme, and the addresses its host resolves to now) without calling it. */
  checkUrl(url: string): Promise<void>;
  close(): void;
}

const DEFAULT_TIMEOUT_MS = 5000;

interface PinnedOptions extends https.RequestOptions {
  palisadePin?: string | null;
}

/**
 * Every https connection is checked before the request is written on it (by the pin when there is
 * one, else by the CA chain: packages/protocol/src/tls-pin.ts), and pooled sockets are keyed by
 * the pin too, so a socket verified under one pin never carries a request meant for another.
 */
class VerifyingHttpsAgent extends https.Agent {
  override getName(options?: PinnedOptions): string {
    return `${super.getName(options)}:${options?.palisadePin ?? ''}`;
  }

  override createConnection(options: PinnedOptions, done?: (err: Error | null, socket: Duplex) => void) {
    const socket = super.createConnection({ ...options, rejectUnauthorized: false }) as TLSSocket;
    handOverWhenVerified(socket, options.palisadePin ?? null, done as (err: Error | null, socket?: Duplex) => void);
    return undefined;
  }
}
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;
/** How many checked URLs a client keeps (checkedTarget). */
const CHECKED_URLS_MAX = 1000;

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutboundError('refused', 'not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutboundError('refused', `only http and https URLs are allowed, not ${url.protocol.replace(':', '')}`);
  }
  if (url.username || url.password)
    throw new OutboundError('refused', 'URLs with a user name or password are not allowed');
  return url;
}

/**
 * The one HTTP client for user-supplied URLs (agents, webhooks). Every address is checked when the
 * socket connects, so a hostname that resolves to a forbidden address later (DNS rebinding) gains
 * nothing. Redirects are not followed; timeouts and a response size cap apply. Sockets are pooled;
 * a request whose pooled socket turns out closed by the peer is sent once more on a new connection.
 */
export function createGuardedClient({ allowPrivate }: { allowPrivate: boolean }): GuardedClient {
  const guardedLookup: LookupFunction = (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as unknown as LookupAddress[];
      for (const entry of list) {
        const verdict = checkAddress(entry.address, allowPrivate);
        if (!verdict.ok) {
          const refusal = Object.assign(new Error(`${hostname} resolves to a forbidden address: ${verdict.reason}`), {
            code: 'EPALISADE_REFUSED',
          });
          return callback(refusal, '', 0);
        }
      }
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0];
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 0);
      return callback(null, first.address, first.family);
    });
  };

  const agentOptions = { keepAlive: true, maxSockets: 256, maxFreeSockets: 64, lookup: guardedLookup };
  const httpAgent = new http.Agent(agentOptions);
  const httpsAgent = new VerifyingHttpsAgent(agentOptions);
  // For the one retry of a request whose kept-alive socket was reset: a new connection, not pooled.
  const freshHttpAgent = new http.Agent({ ...agentOptions, keepAlive: false });
  const freshHttpsAgent = new VerifyingHttpsAgent({ ...agentOptions, keepAlive: false });

  function checkLiteral(url: URL) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const verdict = checkAddress(host, allowPrivate);
      if (!verdict.ok) throw new OutboundError('refused', `forbidden address: ${verdict.reason}`);
    }
  }

  /**
   * URLs already parsed and whose literal address passed, by their text: an agent's /metrics is asked
   * every 2 s by each open page, and the verdict on a URL's literal never changes in one process
   * (hostnames are still checked at each connection, by guardedLookup). Emptied when full.
   */
  const checked = new Map<string, URL>();
  function checkedTarget(raw: string): URL {
    let url = checked.get(raw);
    if (!url) {
      url = parseTarget(raw);
      checkLiteral(url);
      if (checked.size >= CHECKED_URLS_MAX) checked.clear();
      checked.set(raw, url);
    }
    return url;
  }

  return {
    async checkUrl(raw) {
      const url = parseTarget(raw);
      checkLiteral(url);
      const host = url.hostname.replace(/^\[|\]$/g, '');
      if (isIP(host)) return;
      await new Promise<void>((resolve, reject) => {
        guardedLookup(host, { all: true }, (err) => {
          if (!err) return resolve();
          const code = (err as NodeJS.ErrnoException).code;
          reject(new OutboundError(code === 'EPALISADE_REFUSED' ? 'refused' : 'unreachable', err.message));
        });
      });
    },

    request(req) {
      const url = checkedTarget(req.url);
      const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
      const transport = url.protocol === 'https:' ? https : http;
      const pin = req.tlsFingerprint ?? null;
      if (pin && url.protocol !== 'https:') {
        return Promise.reject(new OutboundError('refused', 'a certificate fingerprint needs an https address'));
      }
      return new Promise((resolve, reject) => {
        let settled = false;
        const finish = (err: OutboundError | null, res?: OutboundResponse) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (err) reject(err);
          else resolve(res!);
        };
        let outgoing: http.ClientRequest;
        const send = (fresh: boolean) => {
          let answered = false;
          outgoing = transport.request(
            url,
            {
              method: req.method,
              // A body always goes with its length: Node frames a DELETE body with neither a length nor
              // chunking, and the receiver reads it as the start of another request.
              headers:
                req.body === undefined
                  ? req.headers
                  : { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) },
              agent:
                url.protocol === 'https:' ? (fresh ? freshHttpsAgent : httpsAgent) : fresh ? freshHttpAgent : httpAgent,
              ...(pin ? { palisadePin: pin } : {}),
            } as PinnedOptions,
            (res) => {
              answered = true;
              const chunks: Buffer[] = [];
              let size = 0;
              res.on('data', (chunk: Buffer) => {
                size += chunk.length;
                if (size > maxBytes) {
                  outgoing.destroy();
                  finish(new OutboundError('too_large', `the answer was larger than ${maxBytes} bytes`));
                  return;
                }
                chunks.push(chunk);
              });
              res.on('end', () =>
                finish(null, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
              );
              res.on('error', (err) =>
                finish(new OutboundError('unreachable', `the connection broke: ${err.message}`)),
              );
            },
          );
          const sent = outgoing;
          outgoing.on('error', (err: NodeJS.ErrnoException) => {
            if (settled) return;
            if (err.code === 'EPALISADE_REFUSED') return finish(new OutboundError('refused', err.message));
            if (err instanceof TlsPinError) return finish(new OutboundError('tls', err.message, err));
            // A kept-alive socket the peer closed as the request went out (ECONNRESET, "socket hang
            // up") before any answer: sent once more at once on a new connection (docs/alerts.md, "Delivery").
            if (!fresh && !answered && sent.reusedSocket && err.code === 'ECONNRESET') return send(true);
            finish(new OutboundError('unreachable', describeNetworkError(err)));
          });
          outgoing.end(req.body);
        };
        const timer = setTimeout(() => {
          outgoing.destroy();
          finish(new OutboundError('timeout', `no answer within ${timeoutMs} ms`));
        }, timeoutMs);
        send(false);
      });
    },

    close() {
      for (const agent of [httpAgent, httpsAgent, freshHttpAgent, freshHttpsAgent]) agent.destroy();
    },
  };
}

function describeNetworkError(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'connection refused (is it running, and on that port?)';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name does not resolve';
    case 'ECONNRESET':
      return 'the connection was reset';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return 'the host is unreachable';
    default:
      return err.code ? `network error ${err.code}` : 'network error';
  }
}
