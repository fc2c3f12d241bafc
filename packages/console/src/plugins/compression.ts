import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyInstance } from 'fastify';

/** The encodings the console sends, best first. */
export type Encoding = 'br' | 'gzip';

/**
 * The encoding to answer in, from the request's `Accept-Encoding` (RFC 9110 §12.5.3): brotli when
 * accepted, else gzip, else none. `q=0` refuses one; `*` accepts any not named.
 */
export function preferredEncoding(header: string | string[] | undefined): Encoding | null {
  if (header === undefined) return null;
  const weights = new Map<string, number>();
  for (const part of (Array.isArray(header) ? header.join(',') : header).split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    if (!name) continue;
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    weights.set(name, q === undefined ? 1 : Number(q) || 0);
  }
  const accepts = (e: Encoding) => (weights.get(e) ?? weights.get('*') ?? 0) > 0;
  if (accepts('br')) return 'br';
  if (accepts('gzip')) return 'gzip';
  return null;
}

/** JSON answers at least this long go out compressed to a client that accepts it. */
export const COMPRESS_MIN_BYTES = 1024;

const brotli = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * Compresses JSON answers of COMPRESS_MIN_BYTES or more (the fleet list of 200 servers is 64 KB),
 * in the thread pool, at a level that costs about a millisecond for that list: brotli quality 5,
 * gzip level 6. Static dashboard files are compressed once at build time instead
 * (routes/web/index.ts); streams and answers that already carry an encoding pass through.
 */
export function registerCompression(app: FastifyInstance) {
  // A callback hook, not an async one: the answers that stay as they are (most, and every small
  // one) cost no promise.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return done(null, payload);
    const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length;
    if (length < COMPRESS_MIN_BYTES || reply.getHeader('content-encoding') !== undefined) return done(null, payload);
    if (!String(reply.getHeader('content-type') ?? '').startsWith('application/json')) return done(null, payload);
    reply.header('vary', 'accept-encoding');
    const encoding = preferredEncoding(request.headers['accept-encoding']);
    if (encoding === null) return done(null, payload);
    const bytes = typeof payload === 'string' ? Buffer.from(payload) : payload;
    const compressed =
      encoding === 'br'
        ? brotli(bytes, {
            params: {
              [constants.BROTLI_PARAM_QUALITY]: 5,
              [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
              [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length,
            },
          })
        : gzipAsync(bytes, { level: 6 });
    compressed.then(
      (body) => {
        reply.header('content-encoding', encoding);
        reply.removeHeader('content-length');
        done(null, body);
      },
      (err: Error) => done(err),
    );
  });
}
