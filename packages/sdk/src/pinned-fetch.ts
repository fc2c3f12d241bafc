import https from 'node:https';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { handOverWhenVerified } from '@palisade/protocol/tls-pin';

const NULL_BODY = new Set([101, 204, 205, 304]);

/**
 * A `fetch` for one agent that serves TLS with its own certificate: the connection is accepted only
 * when the certificate's SHA-256 fingerprint is `pin`, checked before the request (and its key) is
 * written. Node's fetch cannot pin, so this speaks https directly; one connection per request.
 */
export function pinnedFetch(pin: string): typeof fetch {
  return (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.protocol !== 'https:') return reject(new TypeError('a certificate fingerprint needs an https address'));
      const headers = new Headers(init?.headers);
      const body = init?.body;
      if (body !== undefined && body !== null && typeof body !== 'string') {
        return reject(new TypeError('pinnedFetch sends string bodies only'));
      }
      const req = https.request(
        url,
        {
          method: init?.method ?? 'GET',
          headers: Object.fromEntries(headers.entries()),
          ...(init?.signal ? { signal: init.signal } : {}),
          // No agent, so this connection function is used (with `agent: false` Node makes a fresh Agent).
          createConnection: (options: tls.ConnectionOptions, done: (err: Error | null, socket?: Duplex) => void) => {
            handOverWhenVerified(tls.connect({ ...options, rejectUnauthorized: false }), pin, done);
            return undefined;
          },
        } as https.RequestOptions,
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            const answerHeaders = new Headers();
            for (const [name, value] of Object.entries(res.headers)) {
              if (value !== undefined) answerHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
            }
            resolve(
              new Response(NULL_BODY.has(status) ? null : Buffer.concat(chunks), { status, headers: answerHeaders }),
            );
          });
        },
      );
      req.on('error', reject);
      req.end(body ?? undefined);
    });
}
