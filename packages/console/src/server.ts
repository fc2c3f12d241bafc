import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { buildApp } from './app.js';
import type { ConsoleConfig } from './config.js';
import { type DatabaseHandle, openDatabase } from './db/database.js';

/**
 * Periodic upkeep: sample rollups and retention, expired sessions and rate-limit windows. Each round
 * takes a lease in the database first, so with several console processes only one does a round at a
 * time, and a process that dies mid-round frees it when the lease expires. A failed round is logged
 * and tried again next time.
 */
export function startHousekeeping(app: FastifyInstance) {
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const every = (ms: number, name: string, work: () => Promise<unknown>) => {
    let running = false;
    const round = () => app.services.housekeeping.underLease(name, holder, work);
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      round()
        .catch((err) => app.log.error({ err }, `${name} failed`))
        .finally(() => {
          running = false;
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
    every(60 * 60_000, 'session-cleanup', () => app.services.housekeeping.expireSessions()),
    every(10 * 60_000, 'rate-limit-cleanup', () => app.services.housekeeping.expireRateLimitWindows()),
  ];
  // The notification outbox is claimed row by row, so every process may work it at the same time.
  let delivering = false;
  const outbox = setInterval(() => {
    if (delivering) return;
    delivering = true;
    app.services.notifications
      .runOnce()
      .catch((err) => app.log.error({ err }, 'notification delivery failed'))
      .finally(() => {
        delivering = false;
      });
  }, 1000);
  outbox.unref();
  timers.push(outbox);
  return { stop: () => timers.forEach(clearInterval) };
}

export interface RunningConsole {
  app: FastifyInstance;
  url: string;
  close(): Promise<void>;
}

/** Opens the database, seeds it, and serves the console until close() is called. */
export async function startConsole(config: ConsoleConfig, print: (line: string) => void): Promise<RunningConsole> {
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
      logger: {
        level: config.logLevel,
        redact: {
          paths: ['req.headers.authorization', 'req.headers.cookie', 'req.headers["x-svc-key"]'],
          censor: '[hidden]',
        },
      },
    });
    await app.services.catalog.seed();
    if (config.bootstrapAdmin) {
      const admin = await app.services.accounts.ensureBootstrapAdmin();
      if (admin) {
        print(
          `First start: an admin account was created. Sign in as ${admin.email} with password ${admin.password} ` +
            '(shown once; create your own admin with `palisade-console admin create-admin`).',
        );
      }
    }
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
  if (config.allowPrivateTargets) {
    print(
      'Private agent targets are allowed (PALISADE_ALLOW_PRIVATE_TARGETS=1, as `npm start` sets): the console ' +
        'may connect to loopback and private addresses. Unset it on a console that faces the internet.',
    );
  }
  if (!config.publicUrl) {
    print(
      'PALISADE_PUBLIC_URL is not set: the console answers only to localhost and IP addresses; set it to ' +
        'the https:// address people and agents use to serve that name.',
    );
  }
  // Last: the listening line tells scripts and tests that start-up is done.
  print(`Palisade console listening on ${url}`);
  const jobs = startHousekeeping(app);
  return {
    app,
    url,
    async close() {
      jobs.stop();
      await app.close();
      redis?.disconnect();
      await database.close();
    },
  };
}
