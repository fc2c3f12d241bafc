import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import { executableAsset, IN_EXECUTABLE } from '../../packaged.js';
import { preferredEncoding } from '../../plugins/compression.js';

// This file runs compiled, from <console package>/dist/src/routes/web/.
const PACKAGED_WEB_ROOT = fileURLToPath(new URL('../../../../web/', import.meta.url));

/**
 * The dashboard's built files, served from the console's own host: web/ inside the npm tarball
 * (scripts/package.mjs puts them there), else packages/web/dist of this repository.
 */
export const WEB_ROOT = existsSync(join(PACKAGED_WEB_ROOT, 'index.html'))
  ? PACKAGED_WEB_ROOT
  : fileURLToPath(new URL('../../../../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/**
 * The dashboard's CSP: only its own built files run or style it. React sets `style` through the CSSOM,
 * which style-src does not govern, so no 'unsafe-inline' is needed; the favicon is a data: URL.
 */
export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; manifest-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
};

/**
 * The dashboard's files: on disk under WEB_ROOT, or, in the single executable, its assets `web/<path>`
 * (src/packaged.ts); null when there is no such file.
 */
function webFile(relative: string): Buffer | null {
  if (IN_EXECUTABLE) return executableAsset(`web/${relative}`);
  const file = join(WEB_ROOT, relative);
  return existsSync(file) && statSync(file).isFile() ? readFileSync(file) : null;
}

export default async function webRoutes(app: FastifyInstance) {
  const sendIndex = (reply: import('fastify').FastifyReply) => {
    const index = webFile('index.html');
    if (index === null) {
      return reply
        .status(503)
        .type('text/plain; charset=utf-8')
        .send('The dashboard is not built. Run `npm install` (or `npm run build`) in the Palisade checkout.');
    }
    return reply
      .headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache' })
      .type(TYPES['.html']!)
      .send(index);
  };

  app.get('/', (_request, reply) => reply.redirect('/dashboard'));
  app.get('/dashboard', (_request, reply) => sendIndex(reply));
  app.get('/dashboard/*', (_request, reply) => sendIndex(reply));

  // Hashed build assets: immutable, cached for a year; brotli or gzip as the build made them
  // (packages/web/vite.config.ts) when the browser accepts it. Source maps only when configured.
  app.get<{ Params: { '*': string } }>('/assets/*', (request, reply) => {
    const relative = normalize(request.params['*']).replace(/^(\.\.(\/|\\|$))+/, '');
    const file = join(WEB_ROOT, 'assets', relative);
    if (!file.startsWith(join(WEB_ROOT, 'assets')) || /\.(br|gz)$/.test(relative)) return reply.callNotFound();
    if (extname(file) === '.map' && !app.config.webSourceMaps) return reply.callNotFound();
    const bytes = webFile(join('assets', relative));
    if (bytes === null) return reply.callNotFound();
    const encoding = preferredEncoding(request.headers['accept-encoding']);
    const encoded =
      encoding === null ? null : webFile(join('assets', `${relative}.${encoding === 'br' ? 'br' : 'gz'}`));
    reply
      .headers({ ...SECURITY_HEADERS, 'cache-control': 'public, max-age=31536000, immutable', vary: 'accept-encoding' })
      .type(TYPES[extname(file)] ?? 'application/octet-stream');
    if (encoded === null) return reply.send(bytes);
    return reply.header('content-encoding', encoding).send(encoded);
  });
}
