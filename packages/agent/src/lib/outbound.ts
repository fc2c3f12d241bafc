import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import http from 'node:http';

export interface OutboundAnswer {
  status: number;
  body: string;
}

/** Why an outgoing call got no HTTP answer: the endpoint could not be reached, or it was silent too long. */
export class OutboundError extends Error {
  constructor(
    readonly kind: 'unreachable' | 'timeout',
    message: string,
  ) {
    super(message);
    this.name = 'OutboundError';
  }
}

/** Sends a JSON POST and reads the answer (capped at 64 KiB); the whole exchange is bounded by `timeoutMs`. */
export type PostJson = (
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
) => Promise<OutboundAnswer>;

const MAX_ANSWER = 64 * 1024;

export const postJson: PostJson = (url, body, headers, timeoutMs) => sendJson('POST', url, body, headers, timeoutMs);

/** postJson with another method (`DELETE /api/agent/server`: `palisade-agent uninstall --forget`). */
export const sendJson = (
  method: 'POST' | 'DELETE',
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<OutboundAnswer> =>
  new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      reject(new OutboundError('unreachable', `bad URL ${url}`));
      return;
    }
    // The signal ends the whole exchange, answer included; a promise settles once, so whichever of
    // the answer, the error and the deadline comes first decides.
    const signal = AbortSignal.timeout(timeoutMs);
    const timedOut = () => new OutboundError('timeout', `no answer within ${timeoutMs} ms`);
    // node:https (and TLS under it) is loaded by the first https call only (docs/performance.md).
    const client = target.protocol === 'https:' ? process.getBuiltinModule('node:https') : http;
    const req = client.request(
      target,
      {
        method,
        agent: false,
        signal,
        headers: {
          ...(body ? { 'content-type': 'application/json' } : {}),
          'content-length': Buffer.byteLength(body),
          'user-agent': 'palisade-agent',
          ...headers,
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size <= MAX_ANSWER) chunks.push(c);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', () =>
          signal.aborted ? reject(timedOut()) : resolve({ status: res.statusCode ?? 0, body: '' }),
        );
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      reject(signal.aborted ? timedOut() : new OutboundError('unreachable', describeNetworkError(err))),
    );
    req.end(body);
  });

function describeNetworkError(err: NodeJS.ErrnoException): string {
  const agg = err as NodeJS.ErrnoException & { errors?: NodeJS.ErrnoException[] };
  if (agg.errors && agg.errors.length > 0) return agg.errors.map((e) => e.message).join('; ');
  return err.message || err.code || 'network error';
}

/** What `getToFile` wrote: its size and SHA-256 (hex), hashed as it arrived. */
export interface Downloaded {
  bytes: number;
  sha256: string;
}

/**
 * GETs `url` into the open file `fd`, streamed, refusing an answer other than 200 or one larger
 * than `maxBytes` (by its content-length, or as it arrives); the exchange fails when the console
 * is silent for `idleMs`. The same client as the check-ins (the console URL, its TLS), no token:
 * the console serves `/install/` files to anyone (packages/console/src/routes/install/index.ts).
 */
export const getToFile = (url: string, fd: number, maxBytes: number, idleMs: number): Promise<Downloaded> =>
  new Promise((resolve, reject) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      reject(new OutboundError('unreachable', `bad URL ${url}`));
      return;
    }
    const client = target.protocol === 'https:' ? process.getBuiltinModule('node:https') : http;
    const hash = createHash('sha256');
    let settled = false;
    const finish = (err: Error | null, value?: Downloaded) => {
      if (settled) return;
      settled = true;
      if (err) {
        req.destroy();
        reject(err);
      } else resolve(value!);
    };
    const req = client.request(
      target,
      { method: 'GET', agent: false, headers: { 'user-agent': 'palisade-agent' } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          finish(new OutboundError('unreachable', `${target.pathname}: the console answered HTTP ${res.statusCode}`));
          return;
        }
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          finish(new Error(`${target.pathname}: ${declared} bytes, more than the ${maxBytes} allowed`));
          return;
        }
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          if (settled) return;
          bytes += chunk.length;
          if (bytes > maxBytes) {
            finish(new Error(`${target.pathname}: more than the ${maxBytes} bytes allowed`));
            return;
          }
          hash.update(chunk);
          let written = 0;
          try {
            while (written < chunk.length) written += writeSync(fd, chunk, written);
          } catch (err) {
            finish(err as Error);
          }
        });
        res.on('end', () => finish(null, { bytes, sha256: hash.digest('hex') }));
        res.on('error', (err) => finish(new OutboundError('unreachable', `${target.pathname}: ${err.message}`)));
        res.on('close', () => {
          if (!res.complete) finish(new OutboundError('unreachable', `${target.pathname}: the download was cut off`));
        });
      },
    );
    req.setTimeout(idleMs, () =>
      finish(new OutboundError('timeout', `${target.pathname}: no data for ${Math.round(idleMs / 1000)} s`)),
    );
    req.on('error', (err: NodeJS.ErrnoException) =>
      finish(new OutboundError('unreachable', describeNetworkError(err))),
    );
    req.end();
  });
