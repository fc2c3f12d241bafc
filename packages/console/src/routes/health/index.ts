import type { FastifyInstance } from 'fastify';
import type { Redis } from 'ioredis';

/** Probe paths: outside /api, no sign-in, no host check, never logged at info (docs/deploy.md, "Health and readiness"). */
export const PROBE_PATHS: readonly string[] = ['/healthz', '/readyz'];

/** How long readiness waits for the database or Redis before calling it down: a probe must answer in time. */
const PROBE_TIMEOUT_MS = 2000;

function within<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what}: no answer within ${PROBE_TIMEOUT_MS / 1000} s`)),
      PROBE_TIMEOUT_MS,
    );
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/** What a probe answer always carries: fresh, never cached by a proxy in between. */
const PROBE_HEADERS = { 'cache-control': 'no-store' };

export default async function healthRoutes(app: FastifyInstance, opts: { redis: Redis | null }) {
  const quiet = { logLevel: 'warn' as const };

  // Up: the process runs its event loop. No database call, so a slow database does not restart processes.
  app.get('/healthz', quiet, async (_request, reply) => {
    reply.headers(PROBE_HEADERS);
    return { status: 'ok', pid: process.pid };
  });

  // Ready: the database answers a trivial query, and Redis a PING when one is configured. A 503 names
  // what is down; the underlying error (addresses, user names) goes to the log, not to the caller.
  app.get('/readyz', quiet, async (request, reply) => {
    const checks: Array<[string, Promise<unknown>]> = [
      ['database', within(app.services.health.databaseAnswers(), 'database')],
    ];
    if (opts.redis) checks.push(['redis', within(opts.redis.ping(), 'redis')]);
    const [results, evaluation] = await Promise.all([
      Promise.allSettled(checks.map(([, check]) => check)),
      within(app.services.health.evaluation(), 'alert evaluation').catch(() => null),
    ]);
    const answer: Record<string, unknown> = {
      status: 'ready',
      database: 'ok',
      redis: opts.redis ? 'ok' : 'not configured',
      // When alerts were last evaluated (by any console) and whether that is late (docs/alerts.md,
      // "Timing"). Late evaluation does not make a console unready: every console would be.
      alerts: evaluation
        ? {
            last_round_at: evaluation.lastRoundAt === null ? null : new Date(evaluation.lastRoundAt).toISOString(),
            age_s: evaluation.ageS,
            late: evaluation.late,
          }
        : { last_round_at: null, age_s: null, late: null },
    };
    const down: string[] = [];
    results.forEach((result, i) => {
      if (result.status === 'fulfilled') return;
      const name = checks[i]![0];
      down.push(name);
      answer[name] = 'down';
      request.log.warn({ err: result.reason }, `readiness: ${name} is down`);
    });
    reply.headers(PROBE_HEADERS);
    if (down.length === 0) return answer;
    return reply
      .status(503)
      .send({ ...answer, status: 'not ready', error: `${down.join(' and ')} not reachable: see the console log` });
  });
}
