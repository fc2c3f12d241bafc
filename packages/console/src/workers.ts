import cluster, { type Worker } from 'node:cluster';
import type { Server } from 'node:http';
import type { ConsoleConfig } from './config.js';
import { IN_EXECUTABLE } from './packaged.js';
import { type Family, mergeWorkerSnapshots } from './plugins/metrics.js';
import { printNotices, type RunningConsole, seedDatabase, startMetricsListener, withDatabase } from './server.js';

/**
 * Several console workers on one port (docs/deploy.md, "Workers"): the primary migrates and seeds the
 * database once, forks the workers (node:cluster hands connections to them in turn), starts a new
 * one when one dies, serves their metrics as one page, and on SIGTERM or SIGINT lets each finish its
 * requests. Each worker is a whole console process; they agree through PostgreSQL (and Redis), as
 * consoles behind a proxy do, which is why several workers need PostgreSQL.
 */

/** The IPC message a primary sends to ask a worker for its metrics, and the worker's answer. */
interface MetricsAsk {
  type: 'palisade-metrics';
  id: number;
}
interface MetricsAnswer extends MetricsAsk {
  families: Family[];
}

const isMetricsMessage = (m: unknown): m is MetricsAsk =>
  typeof m === 'object' && m !== null && (m as MetricsAsk).type === 'palisade-metrics';

/** How long a scrape waits for each worker; a busy or dying worker is left out of that page. */
const SCRAPE_WAIT_MS = 2000;

/** A worker that dies before it listens this many times in a row means start-up itself fails: give up. */
const MAX_FAILED_STARTS = 5;

/** Pause before a dead worker is replaced, so a crash loop does not spin the machine. */
const RESTART_DELAY_MS = 500;

export async function runPrimary(config: ConsoleConfig, print: (line: string) => void): Promise<void> {
  // Migrate and seed once, here, so the workers do not race to create the catalog or the first admin.
  await withDatabase(config, (services) => seedDatabase(services, config, print));

  let closing = false;
  let failedStarts = 0;
  const listening = new Set<number>();
  let announced = false;
  // cluster starts each worker as `<execPath> <argv[1]> <argv[2…]>`. The single executable
  // (src/packaged.ts) has argv[1] = its own path and puts it there again in the worker, which then
  // sees its path as a command: there the worker's first argument is this process's first own one.
  if (IN_EXECUTABLE) cluster.setupPrimary({ exec: process.argv[2] ?? 'serve', args: process.argv.slice(3) });
  const fork = () => cluster.fork({ PALISADE_BOOTSTRAP_ADMIN: '0' });

  cluster.on('listening', (worker, address) => {
    // Each worker listens once, on the console's port (the metrics listener is the primary's).
    if (listening.has(worker.id)) return;
    listening.add(worker.id);
    failedStarts = 0;
    if (announced || listening.size < config.workers) return;
    announced = true;
    printNotices(config, print);
    const host = address.address?.includes(':') ? `[${address.address}]` : (address.address ?? config.host);
    // Last: the listening line tells scripts and tests that start-up is done.
    print(`Palisade console listening on http://${host}:${address.port} (${config.workers} workers)`);
  });

  const exited = new Promise<void>((resolve) => {
    cluster.on('exit', (worker, code, signal) => {
      const started = listening.delete(worker.id);
      if (closing) {
        if (Object.keys(cluster.workers ?? {}).length === 0) resolve();
        return;
      }
      print(`worker ${worker.process.pid} ended (${signal ?? `exit code ${code}`}); starting another`);
      if (!started && ++failedStarts >= MAX_FAILED_STARTS) {
        print(`palisade-console: ${MAX_FAILED_STARTS} workers in a row ended before listening; stopping`);
        closing = true;
        for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGTERM');
        process.exitCode = 1;
        if (Object.keys(cluster.workers ?? {}).length === 0) resolve();
        return;
      }
      setTimeout(() => {
        if (!closing) fork();
      }, RESTART_DELAY_MS).unref();
    });
  });

  for (let i = 0; i < config.workers; i++) fork();

  let metricsServer: Server | null = null;
  if (config.metricsAddr) {
    const listener = await startMetricsListener(config.metricsAddr, gatherWorkerMetrics);
    metricsServer = listener.server;
    print(`Metrics for Prometheus on ${listener.url}`);
  }

  const stop = (signal: string) => {
    if (closing) return;
    closing = true;
    print(`${signal}: shutting down ${Object.keys(cluster.workers ?? {}).length} workers`);
    metricsServer?.close();
    // Each worker finishes the requests it has in flight and closes its pool (cli.ts).
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill('SIGTERM');
    if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(process.exitCode ?? 0);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  await exited;
  metricsServer?.close();
}

let nextAsk = 1;

/** Asks every live worker for its metrics snapshot and labels each sample with the worker's pid. */
async function gatherWorkerMetrics(): Promise<Family[]> {
  const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w?.isConnected() === true);
  const answers = await Promise.all(
    workers.map(
      (worker) =>
        new Promise<{ worker: string; families: Family[] } | null>((resolve) => {
          const id = nextAsk++;
          const timer = setTimeout(() => done(null), SCRAPE_WAIT_MS);
          const onMessage = (message: unknown) => {
            if (isMetricsMessage(message) && message.id === id) {
              done({ worker: String(worker.process.pid), families: (message as MetricsAnswer).families });
            }
          };
          const done = (answer: { worker: string; families: Family[] } | null) => {
            clearTimeout(timer);
            worker.off('message', onMessage);
            resolve(answer);
          };
          worker.on('message', onMessage);
          try {
            worker.send({ type: 'palisade-metrics', id } satisfies MetricsAsk);
          } catch {
            done(null);
          }
        }),
    ),
  );
  return mergeWorkerSnapshots(answers.filter((a) => a !== null));
}

/** In a worker: answer the primary's metrics questions, and stop when the primary is gone. */
export function serveAsWorker(running: RunningConsole, stop: (reason: string) => void) {
  process.on('message', (message: unknown) => {
    if (!isMetricsMessage(message)) return;
    running.app.metrics.snapshot().then(
      (families) => process.send?.({ type: 'palisade-metrics', id: message.id, families } satisfies MetricsAnswer),
      () => process.send?.({ type: 'palisade-metrics', id: message.id, families: [] } satisfies MetricsAnswer),
    );
  });
  process.on('disconnect', () => stop('primary gone'));
}
