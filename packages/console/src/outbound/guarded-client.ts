import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { checkAddress } from './target-policy.js';

export type OutboundFailure = 'refused' | 'unreachable' | 'timeout' | 'too_large';

/** A failed outgoing call; `message` is safe to show to the user (never a key or a header value). */
export class OutboundError extends Error {
  constructor(
    readonly kind: OutboundFailure,
    message: string,
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
const DEFAULT_MAX_BYTES = 4 * 1024 * 1024;

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
 * nothing. Redirects are not followed; timeouts and a response size cap apply. Sockets are pooled.
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
  const httpsAgent = new https.Agent(agentOptions);

  function checkLiteral(url: URL) {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (isIP(host)) {
      const verdict = checkAddress(host, allowPrivate);
      if (!verdict.ok) throw new OutboundError('refused', `forbidden address: ${verdict.reason}`);
    }
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
      const url = parseTarget(req.url);
      checkLiteral(url);
      const timeoutMs = req.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const maxBytes = req.maxBytes ?? DEFAULT_MAX_BYTES;
      const transport = url.protocol === 'https:' ? https : http;
      return new Promise((resolve, reject) => {
        let settled = false;
        const finish = (err: OutboundError | null, res?: OutboundResponse) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          if (err) reject(err);
          else resolve(res!);
        };
        const outgoing = transport.request(
          url,
          {
            method: req.method,
            headers: req.headers,
            agent: url.protocol === 'https:' ? httpsAgent : httpAgent,
          },
          (res) => {
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
            res.on('error', (err) => finish(new OutboundError('unreachable', `the connection broke: ${err.message}`)));
          },
        );
        const timer = setTimeout(() => {
          outgoing.destroy();
          finish(new OutboundError('timeout', `no answer within ${timeoutMs} ms`));
        }, timeoutMs);
        outgoing.on('error', (err: NodeJS.ErrnoException) => {
          if (err.code === 'EPALISADE_REFUSED') return finish(new OutboundError('refused', err.message));
          finish(new OutboundError('unreachable', describeNetworkError(err)));
        });
        outgoing.end(req.body);
      });
    },

    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
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
