import { errorCodeFor } from '@palisade/protocol';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import type { Redis } from 'ioredis';
import { type ConsoleConfig, proxyTrust } from './config.js';
import type { Database } from './db/schema.js';
import { AppError } from './errors.js';
import { createGuardedClient } from './outbound/guarded-client.js';
import { registerCompression } from './plugins/compression.js';
import { lazyChildLogger } from './plugins/logging.js';
import { registerRequestMetrics } from './plugins/metrics.js';
import { registerPermissions } from './plugins/permissions.js';
import { createRateLimits, type RateLimits } from './plugins/rate-limits.js';
import { API_HEADERS, matchedPath, registerRequestGuards } from './plugins/request-guards.js';
import accountRoutes from './routes/account/index.js';
import agentRoutes from './routes/agent/index.js';
import agentUpdateRoutes from './routes/agent-updates/index.js';
import alertRoutes from './routes/alerts/index.js';
import authRoutes from './routes/auth/index.js';
import benchmarkRoutes from './routes/benchmarks/index.js';
import catalogRoutes from './routes/catalog/index.js';
import enrolmentRoutes from './routes/enrolment/index.js';
import fleetRoutes from './routes/fleet/index.js';
import healthRoutes, { PROBE_PATHS } from './routes/health/index.js';
import installRoutes from './routes/install/index.js';
import keyRoutes from './routes/keys/index.js';
import serverRoutes from './routes/servers/index.js';
import teamRoutes, { invitationRoutes } from './routes/teams/index.js';
import ticketRoutes from './routes/tickets/index.js';
import tokenRoutes from './routes/tokens/index.js';
import v1Routes from './routes/v1/index.js';
import webRoutes from './routes/web/index.js';
import { createSecretBox, loadSecretKey } from './secrets.js';
import { servicePlugins } from './services/plugins.js';
import type { LinkLog } from './services/servers/links.js';
import { postgresRelayBus, redisRelayBus } from './services/servers/relay-buses.js';

export { createServices, type ServiceDeps, type Services } from './services/plugins.js';

declare module 'fastify' {
  interface FastifyInstance {
    limits: RateLimits;
  }
}

export interface AppDeps {
  config: ConsoleConfig;
  db: Database;
  clock?: () => number;
  redis?: Redis | null;
  logger?: FastifyServerOptions['logger'];
}

export const BODY_LIMIT = 1024 * 1024;

/** The outgoing-call and secret boundaries for these settings; tests and the admin CLI build them the same way. */
export function createBoundaries(config: ConsoleConfig) {
  return {
    outbound: createGuardedClient({ allowPrivate: config.allowPrivateTargets }),
    secrets: createSecretBox(loadSecretKey(config.secretKey, config.dataDir)),
  };
}

/** The answers whose body the API contract fixes as `{"error"}`: v1 failures, and the login and register limits. */
function keepsPlainError(path: string, status: number): boolean {
  return (
    path.startsWith('/api/v1/') || (status === 429 && (path === '/api/auth/login' || path === '/api/auth/register'))
  );
}

/**
 * Every failure body: the sentence in `error`, a stable `code` (packages/protocol/src/envelope.ts)
 * and any extra fields. The v1 API keeps the `{"error"}` bodies its contract gives (docs/api.md).
 */
function failure(request: FastifyRequest, status: number, error: string, extra: Record<string, string> = {}) {
  return keepsPlainError(matchedPath(request), status) ? { error } : { error, code: errorCodeFor(status), ...extra };
}

/** The longest path parameter the router reads (ids, control paths); longer is 414. */
const MAX_PARAM_LENGTH = 200;

/** Builds the console's HTTP app; the caller owns the database and starts listening. */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const { config, db } = deps;
  const clock = deps.clock ?? Date.now;
  const app = Fastify({
    logger: deps.logger ?? false,
    // One info line per request only when asked (PALISADE_ACCESS_LOG): at 4,000 requests a second the
    // two lines Fastify writes cost more than the answer (docs/performance.md, "Logging").
    logController: new LogController({ disableRequestLogging: !config.accessLog }),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: BODY_LIMIT,
    trustProxy: proxyTrust(config.trustProxy),
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: MAX_PARAM_LENGTH },
    // A path the router cannot read is answered before any hook runs: give it the API headers and
    // the usual error body here (Fastify's own echoes the path and has neither).
    frameworkErrors: (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      const status = err.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 414 : 400;
      const message =
        status === 414
          ? `path: a path segment is longer than ${MAX_PARAM_LENGTH} characters`
          : 'path: not a valid URL (bad percent-encoding)';
      reply
        .status(status)
        .headers(API_HEADERS)
        .send(failure(request, status, message));
    },
  });

  app.decorate('config', config);
  app.decorate('db', db);
  app.decorate('clock', clock);
  const { outbound, secrets } = createBoundaries(config);
  app.decorate('outbound', outbound);
  app.decorate('secrets', secrets);
  // Each service is a named plugin that declares what it is built on (services/plugins.ts).
  for (const plugin of servicePlugins) await app.register(plugin);
  const redis = deps.redis ?? null;
  app.decorate(
    'limits',
    createRateLimits({ redis, db: config.databaseUrl ? db : null, clock, prefix: config.redisPrefix }),
  );
  app.addHook('onClose', async () => app.outbound.close());
  // Cached token lookups and v1 answers are trusted only while this process hears of changes.
  await app.services.coherence.listen(redis);
  app.addHook('onClose', () => app.services.coherence.close());
  // Outbound links held by another console process are reached through Redis, or without it through
  // PostgreSQL (docs/deploy.md, "Outbound links and several processes"); SQLite serves one process.
  const relayLog: LinkLog = (level, message) => app.log[level](message);
  const relayBus = redis
    ? redisRelayBus(redis, config.redisPrefix, relayLog)
    : config.databaseUrl
      ? postgresRelayBus(db, { databaseUrl: config.databaseUrl, clock }, relayLog)
      : null;
  if (relayBus) app.addHook('onClose', app.services.agents.links.relayThrough(relayBus, relayLog));
  app.decorateRequest('account', null);
  app.decorateRequest('person', null);
  app.decorateRequest('sessionId', null);

  registerRequestMetrics(app);
  registerRequestGuards(app, config, PROBE_PATHS);
  registerCompression(app);

  app.setErrorHandler((err, request, reply) => {
    if (err instanceof AppError) {
      for (const [name, value] of Object.entries(err.headers)) reply.header(name, value);
      return reply.status(err.status).send(failure(request, err.status, err.message, err.extra));
    }
    const status = (err as { statusCode?: number }).statusCode;
    if (status && status >= 400 && status < 500) {
      const code = (err as { code?: string }).code;
      if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
        return reply.status(415).send(failure(request, 415, 'content-type: send the body as application/json'));
      }
      const message = status === 413 ? `body: larger than the ${BODY_LIMIT} byte limit` : (err as Error).message;
      return reply.status(status).send(failure(request, status, message));
    }
    request.log.error({ err }, 'request failed');
    return reply.status(500).send(failure(request, 500, 'internal error; the console log has the details'));
  });
  app.setNotFoundHandler((request, reply) => reply.status(404).send(failure(request, 404, 'not found')));
  // What each route needs of its actor, checked on the route the router matched (docs/teams.md).
  registerPermissions(app);

  await app.register(healthRoutes, { redis });
  await app.register(authRoutes);
  await app.register(accountRoutes);
  await app.register(tokenRoutes);
  await app.register(enrolmentRoutes);
  await app.register(keyRoutes);
  await app.register(teamRoutes);
  await app.register(invitationRoutes);
  await app.register(ticketRoutes);
  await app.register(alertRoutes);
  await app.register(catalogRoutes);
  await app.register(serverRoutes);
  await app.register(fleetRoutes);
  await app.register(agentRoutes);
  await app.register(agentUpdateRoutes);
  await app.register(benchmarkRoutes);
  await app.register(installRoutes);
  await app.register(webRoutes);
  await app.register(v1Routes);
  return app;
}
