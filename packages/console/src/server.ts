import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { hostname } from 'node:os';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp, createBoundaries, createServices, type Services } from './app.js';
import { type ConsoleConfig, PASSWORD_COST_DEFAULT } from './config.js';
import { type DatabaseHandle, openDatabase } from './db/database.js';
import { loggerOptions } from './plugins/logging.js';
import { type Family, METRICS_CONTENT_TYPE, type MetricsRegistry, renderMetrics } from './plugins/metrics.js';
import { ALERT_ROUND, GRACE_SLACK_MS, lateAfterMs, roundTickMs } from './services/alerts/rounds.js';
import { RECHECK_INTERVAL_MS } from './services/servers/index.js';

/** How long a stopping console waits for running rounds before it abandons them and closes the database. */
const STOP_WAIT_MS = 5000;

/**
 * Periodic upkeep: sample rollups and retention, expired sessions and rate-limit windows, unreachable
 * servers asked again (docs/fleet.md, "Server states"), alert evaluation (docs/alerts.md, "Timing").
 * Each round takes a lease in the database first, so with several console processes only one does a
 * round at a time; the lease lasts 15 s and is renewed while the round runs, so a process that dies
 * mid-round frees it within 15 s, and one that stops frees it at once. A failed round is logged and
 * tried again next time. stop() waits for running rounds (up to STOP_WAIT_MS, then abandons them:
 * each commits transaction by transaction) and frees this process's leases, before the database closes.
 */
export function startHousekeeping(app: FastifyInstance) {
  const alertRounds = app.metrics.histogram(
    'palisade_alert_evaluation_duration_seconds',
    'One alert evaluation round, in the process that held its lease',
    [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  );
  const housekeeping = app.services.housekeeping;
  // Who holds a lease: this process start, never reused (a restarted process on the same host and
  // pid is another holder).
  const holder = `${hostname()}:${process.pid}:${randomUUID()}`;
  const running = new Set<Promise<void>>();
  let stopping = false;
  let abandoned = false;
  const track = (name: string, round: Promise<unknown>) => {
    const done: Promise<void> = round
      .then(
        () => undefined,
        (err) => {
          if (abandoned) app.log.info({ err }, `${name}: round abandoned at stop`);
          else app.log.error({ err }, `${name} failed`);
        },
      )
      .finally(() => running.delete(done));
    running.add(done);
    return done;
  };
  const every = (ms: number, name: string, work: () => Promise<unknown>) => {
    let busy = false;
    const timer = setInterval(() => {
      if (busy || stopping) return;
      busy = true;
      track(name, housekeeping.underLease(name, holder, work)).finally(() => {
        busy = false;
      });
    }, ms);
    timer.unref();
    return timer;
  };
  const timers = [
    every(5 * 60_000, 'sample-rollup', () => app.services.checkins.rollupSamples()),
    every(5 * 60_000, 'nonce-expiry', () => app.services.signing.expireNonces()),
    every(60 * 60_000, 'security-event-expiry', () => app.services.securityEvents.expire()),
    every(60_000, 'stuck-benchmarks', () => app.services.benchmarks.failStuckRuns()),
    every(RECHECK_INTERVAL_MS, 'unreachable-recheck', () => app.services.servers.recheckUnreachable()),
    every(60 * 60_000, 'session-cleanup', () => app.services.housekeeping.expireSessions()),
    every(10 * 60_000, 'rate-limit-cleanup', () => app.services.housekeeping.expireRateLimitWindows()),
    every(60 * 60_000, 'audit-retention', () => app.services.audit.expire(app.config.auditRetentionDays)),
    every(60 * 60_000, 'notification-reconcile', () => app.services.notifications.reconcile()),
    // Agent updates move on at check-ins; this catches the timeouts (docs/fleet.md, "Agent updates").
    every(30_000, 'agent-update-advance', () => app.services.agentUpdates.advance()),
  ];
  timers.push(startAlertRounds(app, holder, alertRounds, track, () => stopping));
  // The notification outbox is claimed row by row, so every process works it at the same time: each
  // second (and whenever a delivery ends) free delivery slots are filled (docs/decisions.md).
  const onError = (err: unknown) => app.log.error({ err }, 'notification delivery failed');
  const outbox = setInterval(() => void app.services.notifications.pump(onError), 1000);
  outbox.unref();
  timers.push(outbox);
  // Fleet entries reach servers the same way: each application is claimed, so every process works
  // them at once and each is applied once (docs/protection.md, "Fleet policies"); a new entry starts a
  // round at once, this timer catches retries and what other processes added.
  const onFleetError = (err: unknown) => app.log.error({ err }, 'fleet propagation failed');
  const fleet = setInterval(() => app.services.fleet.kick(onFleetError), 1000);
  fleet.unref();
  timers.push(fleet);
  return {
    async stop() {
      stopping = true;
      timers.forEach(clearInterval);
      let wait: NodeJS.Timeout | undefined;
      const finished = await Promise.race([
        Promise.all([...running]).then(() => true),
        new Promise<false>((resolve) => {
          wait = setTimeout(() => resolve(false), STOP_WAIT_MS);
        }),
      ]);
      clearTimeout(wait);
      if (!finished) {
        abandoned = true;
        app.log.warn(`stopping: ${running.size} round(s) still running after ${STOP_WAIT_MS / 1000} s are abandoned`);
      }
      // Whatever this process still holds is free now: a restarted or surviving console goes on at once.
      await housekeeping.releaseLeasesOf(holder).catch((err) => app.log.warn({ err }, 'could not free leases'));
      await app.services.notifications.settle();
      await app.services.fleet.settle();
    },
  };
}

/**
 * Alert evaluation (docs/alerts.md, "Timing"): every process looks every roundTickMs() whether a
 * round is due — none finished, by any process, for one interval — and the one that takes the lease
 * evaluates and records the round (job_rounds), so consoles keep one cadence and a survivor or a
 * restarted console goes on within the lease's 15 s. It also tells when evaluation is late (a warning
 * in the log, `alerts.late` on /readyz), and gives servers a grace after a start or a failed round.
 */
function startAlertRounds(
  app: FastifyInstance,
  holder: string,
  durations: ReturnType<FastifyInstance['metrics']['histogram']>,
  track: (name: string, round: Promise<unknown>) => Promise<void>,
  stopping: () => boolean,
): NodeJS.Timeout {
  const { housekeeping, alerts, health } = app.services;
  const intervalMs = app.config.alertIntervalS * 1000;
  const tickMs = roundTickMs(app.config.alertIntervalS);
  const graceMs = app.config.checkinIntervalS * 1000 + GRACE_SLACK_MS;
  let watchingSince = app.clock();
  let resumed = false;
  let late = false;
  let busy = false;
  const due = async () => {
    const last = await housekeeping.lastRound(ALERT_ROUND);
    return last === null || app.clock() >= last.started_at + intervalMs - tickMs / 2;
  };
  const round = async () => {
    const status = await health.evaluation();
    if (status.late !== late) {
      late = status.late;
      if (late) {
        app.log.warn(
          `alert evaluation is late: ${status.lastRoundAt === null ? 'no round has finished' : `the last round finished ${Math.round(status.ageS)} s ago`} (rounds are due every ${app.config.alertIntervalS} s)`,
        );
      } else app.log.warn('alert evaluation is on time again');
    }
    if (!(await due())) return;
    await housekeeping.underLease(
      ALERT_ROUND,
      holder,
      async () => {
        const started = app.clock();
        // After a failed round (the database away) or a gap in evaluation (every console down),
        // silence is judged afresh from now on.
        const previous = await housekeeping.lastRound(ALERT_ROUND);
        if (resumed || (previous !== null && started - previous.finished_at > lateAfterMs(app.config.alertIntervalS))) {
          watchingSince = started;
          resumed = false;
        }
        app.log.debug('alert evaluation round started');
        const t0 = performance.now();
        try {
          await alerts.evaluate({ since: watchingSince, ms: graceMs });
        } finally {
          durations.observe({}, (performance.now() - t0) / 1000);
        }
        await housekeeping.recordRound(ALERT_ROUND, { holder, started_at: started, finished_at: app.clock() });
        app.log.debug('alert evaluation round finished');
      },
      due,
    );
  };
  const tick = () => {
    if (busy || stopping()) return;
    busy = true;
    track(
      ALERT_ROUND,
      round().catch((err) => {
        resumed = true;
        throw err;
      }),
    ).finally(() => {
      busy = false;
    });
  };
  const timer = setInterval(tick, tickMs);
  timer.unref();
  setImmediate(tick);
  return timer;
}

/**
 * Figures read when Prometheus scrapes: the database pool, the outbox and the process itself
 * (docs/deploy.md, "Metrics").
 */
function addScrapeTimeMetrics(metrics: MetricsRegistry, database: DatabaseHandle, services: Services) {
  const pool = (pick: 'total' | 'idle' | 'waiting') => {
    const stats = database.poolStats();
    return stats ? [{ labels: {}, value: stats[pick] }] : [];
  };
  metrics.gauge('palisade_db_pool_connections', 'PostgreSQL pool connections open', () => pool('total'));
  metrics.gauge('palisade_db_pool_idle', 'PostgreSQL pool connections idle', () => pool('idle'));
  metrics.gauge('palisade_db_pool_waiting', 'Queries waiting for a PostgreSQL pool connection', () => pool('waiting'));
  // One query serves both outbox figures of a scrape.
  let outbox: ReturnType<Services['health']['outbox']> | null = null;
  const readOutbox = () => {
    outbox ??= services.health.outbox().finally(() => setImmediate(() => (outbox = null)));
    return outbox;
  };
  metrics.gauge('palisade_outbox_queued', 'Notifications waiting in the outbox (all processes)', async () => [
    { labels: {}, value: (await readOutbox()).queued },
  ]);
  metrics.gauge('palisade_outbox_oldest_age_seconds', 'Age of the oldest queued notification', async () => [
    { labels: {}, value: (await readOutbox()).oldestAgeS },
  ]);
  // Alert evaluation (docs/alerts.md, "Timing"): when the last round finished, by any process.
  let evaluation: ReturnType<Services['health']['evaluation']> | null = null;
  const readEvaluation = () => {
    evaluation ??= services.health.evaluation().finally(() => setImmediate(() => (evaluation = null)));
    return evaluation;
  };
  metrics.gauge(
    'palisade_alert_last_round_timestamp_seconds',
    'When the last alert evaluation round finished (any process), Unix time; absent before the first',
    async () => {
      const { lastRoundAt } = await readEvaluation();
      return lastRoundAt === null ? [] : [{ labels: {}, value: lastRoundAt / 1000 }];
    },
  );
  metrics.gauge(
    'palisade_alert_last_round_age_seconds',
    'Seconds since the last alert evaluation round finished (since start, before the first)',
    async () => [{ labels: {}, value: (await readEvaluation()).ageS }],
  );
  metrics.gauge('palisade_alert_evaluation_late', '1 when alert evaluation is late (docs/alerts.md)', async () => [
    { labels: {}, value: (await readEvaluation()).late ? 1 : 0 },
  ]);
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  loopDelay.enable();
  metrics.gauge('process_resident_memory_bytes', 'Resident memory', () => [
    { labels: {}, value: process.memoryUsage.rss() },
  ]);
  metrics.gauge('nodejs_heap_used_bytes', 'V8 heap in use', () => [
    { labels: {}, value: process.memoryUsage().heapUsed },
  ]);
  metrics.gauge(
    'process_cpu_seconds_total',
    'CPU time, user and system',
    () => {
      const { user, system } = process.cpuUsage();
      return [{ labels: {}, value: (user + system) / 1e6 }];
    },
    'counter',
  );
  // v1 reads from memory (docs/performance.md, "v1 reads from memory").
  metrics.gauge(
    'palisade_v1_cache_lookups_total',
    'v1 token lookups and list answers, from memory (hit) or the database (miss)',
    () => {
      const tokens = services.tokens.stats();
      const lists = services.servers.listCacheStats();
      return [
        { labels: { cache: 'token', result: 'hit' }, value: tokens.hits },
        { labels: { cache: 'token', result: 'miss' }, value: tokens.misses },
        { labels: { cache: 'list', result: 'hit' }, value: lists.hits },
        { labels: { cache: 'list', result: 'miss' }, value: lists.misses },
      ];
    },
    'counter',
  );
  metrics.gauge(
    'palisade_v1_cache_invalidations_total',
    'Changes this process published and received; full drops; requests that found it behind a change',
    () => Object.entries(services.coherence.stats()).map(([kind, value]) => ({ labels: { kind }, value })),
    'counter',
  );
  // Lag since the previous scrape: the delay is reset each time it is read.
  metrics.gauge('nodejs_eventloop_lag_p99_seconds', 'Event-loop delay, 99th percentile since the last scrape', () => {
    const p99 = loopDelay.percentile(99) / 1e9;
    loopDelay.reset();
    return [{ labels: {}, value: Number.isFinite(p99) ? p99 : 0 }];
  });
}

/** Serves `GET /metrics` on its own address, apart from the console's port (docs/deploy.md, "Metrics"). */
export async function startMetricsListener(
  addr: { host: string; port: number },
  snapshot: () => Promise<Family[]>,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found: GET /metrics\n');
      return;
    }
    snapshot().then(
      (families) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(renderMetrics(families)),
      () => res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics unavailable\n'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(addr.port, addr.host, () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : addr.port;
  const host = addr.host.includes(':') ? `[${addr.host}]` : addr.host;
  return { server, url: `http://${host}:${port}/metrics` };
}

/** Runs `action` with the services on the configured database, without an HTTP app (admin commands, a cluster primary). */
export async function withDatabase<T>(config: ConsoleConfig, action: (services: Services) => Promise<T>): Promise<T> {
  const database = await openDatabase(config);
  try {
    const boundaries = createBoundaries(config);
    try {
      return await action(createServices({ db: database.db, config, clock: Date.now, ...boundaries }));
    } finally {
      boundaries.outbound.close();
    }
  } finally {
    await database.close();
  }
}

/** The catalog's defaults and, on a first start, the admin account (printed once). */
export async function seedDatabase(services: Services, config: ConsoleConfig, print: (line: string) => void) {
  await services.catalog.seed();
  if (!config.bootstrapAdmin) return;
  const admin = await services.accounts.ensureBootstrapAdmin();
  if (admin) {
    print(
      `First start: an admin account was created. Sign in as ${admin.email} with password ${admin.password} ` +
        '(shown once; create your own admin with `palisade-console admin create-admin`).',
    );
  }
}

/** What the operator should know about these settings, printed at start. */
export function printNotices(config: ConsoleConfig, print: (line: string) => void) {
  if (config.allowPrivateTargets) {
    print(
      'Private agent targets are allowed (PALISADE_ALLOW_PRIVATE_TARGETS=1, as `npm start` sets): the console ' +
        'may connect to loopback and private addresses. Unset it on a console that faces the internet.',
    );
  }
  if (config.passwordCost < PASSWORD_COST_DEFAULT) {
    print(
      `Passwords are hashed with scrypt N=2^${config.passwordCost} (PALISADE_PASSWORD_COST=${config.passwordCost}), ` +
        `cheaper to guess than the default 2^${PASSWORD_COST_DEFAULT}: meant for test runs and very small machines. ` +
        'Unset it on a console that faces the internet: each weaker hash is made again at its account’s next sign-in.',
    );
  }
  if (!config.publicUrl) {
    print(
      'PALISADE_PUBLIC_URL is not set: the console answers only to localhost and IP addresses; set it to ' +
        'the https:// address people and agents use to serve that name.',
    );
  }
}

export interface RunningConsole {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/**
 * Opens the database, seeds it, and serves the console until close() is called. As one of several
 * workers (`worker`), the primary has migrated and seeded already and prints the notices and the
 * listening line itself, and serves the workers' metrics on its own listener (workers.ts).
 */
export async function startConsole(
  config: ConsoleConfig,
  print: (line: string) => void,
  { worker = false }: { worker?: boolean } = {},
): Promise<RunningConsole> {
  const database: DatabaseHandle = await openDatabase(config);
  const redis = config.redisUrl
    ? new Redis(config.redisUrl, { maxRetriesPerRequest: 2, enableOfflineQueue: true })
    : null;
  let app: FastifyInstance;
  try {
    app = await buildApp({
      config,
      db: database.db,
      redis,
      logger: loggerOptions(config.logLevel, process.stdout.isTTY === true),
    });
    addScrapeTimeMetrics(app.metrics, database, app.services);
    if (!worker) await seedDatabase(app.services, config, print);
    app.services.coherence.serve();
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    redis?.disconnect();
    await database.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `http://${host}:${port}`;
  let metricsServer: Server | null = null;
  if (!worker) {
    printNotices(config, print);
    if (config.metricsAddr) {
      try {
        const listener = await startMetricsListener(config.metricsAddr, () => app.metrics.snapshot());
        metricsServer = listener.server;
        print(`Metrics for Prometheus on ${listener.url}`);
      } catch (err) {
        await app.close();
        redis?.disconnect();
        await database.close();
        throw err;
      }
    }
    // Last: the listening line tells scripts and tests that start-up is done.
    print(`Palisade console listening on ${url}`);
  }
  const jobs = startHousekeeping(app);
  return {
    app,
    url,
    async close() {
      metricsServer?.close();
      await jobs.stop();
      await app.close();
      redis?.disconnect();
      await database.close();
    },
  };
}
