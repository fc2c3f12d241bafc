import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden } from '../errors.js';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Browser-borne requests: cookie-authenticated (or cookie-setting) writes only from our own origin. */
function isBrowserWrite(request: FastifyRequest): boolean {
  if (!UNSAFE.has(request.method) || !request.url.startsWith('/api/')) return false;
  if (request.url.startsWith('/api/v1/') || request.url.startsWith('/api/agent/')) return false;
  return request.headers.authorization === undefined && request.headers['x-svc-key'] === undefined;
}

export function registerRequestGuards(app: FastifyInstance, publicUrl: string | null) {
  // Only JSON bodies are accepted: text/plain and form posts (which a cross-site form can send) answer 415.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', async (request) => {
    if (!isBrowserWrite(request)) return;
    if (request.headers['sec-fetch-site'] === 'cross-site') throw forbidden('cross-site request refused');
    const origin = request.headers.origin;
    if (origin === undefined) return;
    const expected = publicUrl ?? `${request.protocol}://${request.headers.host ?? ''}`;
    if (origin !== expected) throw forbidden('cross-site request refused');
  });

  // Every API answer is private and fresh; the v1 spec asks for no-store on every response, errors included.
  app.addHook('onSend', async (request, reply) => {
    if (request.url.startsWith('/api/')) reply.header('cache-control', 'no-store');
  });
}
