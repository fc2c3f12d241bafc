import { hasSvc1Headers } from '@palisade/protocol';
import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from 'fastify';
import type { ConsoleConfig } from '../config.js';
import { AppError, badRequest } from '../errors.js';
import { forbiddenJsonKey } from '../validation.js';
import { signedRequest } from './auth.js';
import { hostPolicy } from './host-guard.js';

const crossSite = () => new AppError(403, 'cross-site request refused', { code: 'cross_site' });

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * The path the router matched: the route's pattern (`/api/servers/:id/control`), or for a request
 * no route matched, the decoded path. Guards read this, never the raw URL, so `/%61pi/…` (which the
 * router decodes to `/api/…`) meets the same guards as `/api/…`.
 */
export function matchedPath(request: FastifyRequest): string {
  const route = routeOf(request).url;
  if (route !== undefined) return route;
  const raw = request.url.split('?')[0]!;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * The route the router matched, as `request.routeOptions` gives it. Fastify builds that object anew
 * at each read (a dozen fields); the guards, the metrics and the error answers each read it, so it
 * is built once a request and kept.
 */
export function routeOf(request: FastifyRequest): FastifyRequest['routeOptions'] {
  request.matchedRoute ??= request.routeOptions;
  return request.matchedRoute;
}

const isApi = (path: string) => path === '/api' || path.startsWith('/api/');

/** Browser-borne requests: cookie-authenticated (or cookie-setting) writes only from our own origin. */
function isBrowserWrite(request: FastifyRequest): boolean {
  if (!UNSAFE.has(request.method)) return false;
  const path = matchedPath(request);
  if (!isApi(path)) return false;
  if (path.startsWith('/api/v1/') || path.startsWith('/api/agent/')) return false;
  return request.headers.authorization === undefined && request.headers['x-svc-key'] === undefined;
}

/** What an `/api` answer always carries: private, fresh, never sniffed or rendered as a page. */
export const API_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
};

/** One registered route, as the router knows it, with what it declared it needs (plugins/permissions.ts). */
export interface RouteEntry {
  method: string;
  url: string;
  config: FastifyContextConfig;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered, for checks that must cover all of them (tests, the route inventory). */
    routeList: RouteEntry[];
  }
  interface FastifyRequest {
    /** The exact body bytes received, for SVC1 verification. */
    rawBody: Buffer | undefined;
    /** `routeOptions` as first read (routeOf). */
    matchedRoute: FastifyRequest['routeOptions'] | undefined;
  }
  interface FastifyContextConfig {
    /** The route accepts SVC1-signed requests. */
    signed?: boolean;
  }
}

/**
 * `probes`: load-balancer paths (health, readiness) served under any Host name: a balancer asks by
 * address, and their answers say nothing a rebinding page could use.
 */
export function registerRequestGuards(
  app: FastifyInstance,
  config: Pick<ConsoleConfig, 'publicUrl' | 'host'>,
  probes: readonly string[] = [],
) {
  const { publicUrl } = config;
  const hosts = hostPolicy(config);
  app.decorate('routeList', [] as RouteEntry[]);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat())
      app.routeList.push({ method, url: route.url, config: (route.config ?? {}) as FastifyContextConfig });
  });
  // The guards that need no I/O are callback hooks that finish in the same turn: an async hook
  // costs a promise and a trip through the microtask queue on every request (docs/performance.md).
  //
  // First of all: a name the operator did not choose (a DNS-rebinding page) is not served at all.
  // Then browser-borne writes only from our own origin.
  app.addHook('onRequest', (request, _reply, done) => {
    if (!hosts.allows(request.hostname) && !probes.includes(matchedPath(request))) {
      throw new AppError(421, `host: this console answers to ${hosts.expected}`);
    }
    if (isBrowserWrite(request)) {
      if (request.headers['sec-fetch-site'] === 'cross-site') throw crossSite();
      const origin = request.headers.origin;
      // The host was checked above, so the origin built from it is one the operator chose.
      if (origin !== undefined && origin !== (publicUrl ?? `${request.protocol}://${request.host}`)) throw crossSite();
    }
    done();
  });

  // Only JSON bodies are accepted: text/plain and form posts (which a cross-site form can send) answer 415.
  app.removeContentTypeParser('text/plain');

  // JSON is parsed from the bytes received, and the bytes are kept: SVC1 signs them, not a re-serialization.
  app.decorateRequest('rawBody', undefined);
  app.decorateRequest('matchedRoute', undefined);
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    request.rawBody = body as Buffer;
    const text = (body as Buffer).toString('utf8');
    parseJson(request, text, (err, parsed) => {
      if (!err) return done(null, parsed);
      // The parser refuses prototype keys with its generic "not valid JSON"; say which key it was instead.
      const key = forbiddenJsonKey(text);
      if (key) return done(badRequest(`body: the key ${key} is not allowed`), undefined);
      if ((err as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        return done(badRequest('body: not valid JSON'), undefined);
      }
      done(err, undefined);
    });
  });

  // Signed headers on a route that does not accept signed requests are refused, not ignored.
  app.addHook('preHandler', (request, _reply, done) => {
    if (routeOf(request).config.signed || !hasSvc1Headers(request.headers)) return done();
    request.server.services.signing.refuseUnsupported(signedRequest(request)).then(() => done(), done);
  });

  // Every API answer is private and fresh (docs/console.md, "The v1 API": no-store on every answer,
  // errors included), and is data, never a page: nosniff and a CSP that allows nothing.
  app.addHook('onSend', (request, reply, _payload, done) => {
    if (isApi(matchedPath(request))) reply.headers(API_HEADERS);
    done();
  });
}
