import type { FastifyInstance, FastifyRequest } from 'fastify';
import { forbidden } from '../errors.js';
import { hasSignedHeaders } from '../services/signing.service.js';
import { signedRequest } from './auth.js';

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Browser-borne requests: cookie-authenticated (or cookie-setting) writes only from our own origin. */
function isBrowserWrite(request: FastifyRequest): boolean {
  if (!UNSAFE.has(request.method) || !request.url.startsWith('/api/')) return false;
  if (request.url.startsWith('/api/v1/') || request.url.startsWith('/api/agent/')) return false;
  return request.headers.authorization === undefined && request.headers['x-svc-key'] === undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The exact body bytes received, for SVC1 verification. */
    rawBody: Buffer | undefined;
  }
  interface FastifyContextConfig {
    /** The route accepts SVC1-signed requests. */
    signed?: boolean;
  }
}

export function registerRequestGuards(app: FastifyInstance, publicUrl: string | null) {
  // Only JSON bodies are accepted: text/plain and form posts (which a cross-site form can send) answer 415.
  app.removeContentTypeParser('text/plain');

  // JSON is parsed from the bytes received, and the bytes are kept: SVC1 signs them, not a re-serialization.
  app.decorateRequest('rawBody', undefined);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    request.rawBody = body as Buffer;
    parseJson(request, (body as Buffer).toString('utf8'), done);
  });

  // Signed headers on a route that does not accept signed requests are refused, not ignored.
  app.addHook('preHandler', async (request) => {
    if (request.routeOptions.config.signed || !hasSignedHeaders(request.headers)) return;
    await request.server.services.signing.refuseUnsupported(signedRequest(request));
  });

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
