import { rmSync, statSync } from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { UpdateReport } from '@palisade/protocol/agent-update';
import type { CheckinBan } from '@palisade/protocol/checkin';
import { type Alerter, createAlerter } from './alerter/alerter.js';
import { createConsoleLink } from './api/console-link.js';
import { createControlRoutes } from './api/control-routes.js';
import { controlRequest, listenControlSocket } from './api/control-socket.js';
import { prometheusText } from './api/prometheus.js';
import { type ApiRoutes, createApiServer, handleApiCall } from './api/server.js';
import { metricsSnapshot } from './api/snapshot.js';
import { benchmarkJobHandler } from './bench/job.js';
import { createBanOutbox } from './checkin/ban-outbox.js';
import { checkinBody } from './checkin/body.js';
import { type Checkin, createCheckin } from './checkin/checkin.js';
import { updateHooks } from './checkin/update-hooks.js';
import { type AgentConfig, loadConfigFile } from './config/config.js';
import { configAccess } from './config/protection-file.js';
import type { AgentDeps } from './deps.js';
import { createJobRunner } from './jobs/job-runner.js';
import { postJson } from './lib/outbound.js';
import type { Log } from './log.js';
import { readFacts } from './measure/facts.js';
import { Sampler } from './measure/sampler.js';
import { ProtectionEngine } from './protection/engine.js';
import { monitorOnlyProtection, type ProtectionProvider } from './protection/provider.js';
import { type AgentRuntime, createRuntime } from './runtime.js';
import { KeyCheck } from './state/agent-key.js';
import { consoleAddresses, readEnrolment, saveEnrolment, validateEnrolment } from './state/enrolment.js';
import { ensureStateDir, type StatePaths, statePaths, writeFileAtomic } from './state/state-dir.js';
import { ensureTlsCertificate } from './state/tls-certificate.js';
import { AGENT_VERSION } from './version.js';

export interface DaemonOptions {
  configFile: string;
  /** The file was named on the command line, so it must exist. */
  configExplicit: boolean;
  stateDir: string;
  deps: AgentDeps;
  log: Log;
  /** Plain lines for the operator (listening address, how to make a key); never a secret. */
  print: (line: string) => void;
  protection?: ProtectionProvider;
  /** The release key updates from the console are checked against (`run --release-key-file`); default the pinned one. */
  releaseKeyFile?: string;
  /** Where log files and the services found are looked up instead of `/` (`run --host-root`, for tests). */
  hostRoot?: string;
}

export interface RunningDaemon {
  url: string;
  alerter: Alerter;
  reload(): { ok: boolean; error: string | null };
  close(): Promise<void>;
}

export function listenUrl(tls: boolean, address: AddressInfo | { address: string; port: number }): string {
  const host = address.address.includes(':') ? `[${address.address}]` : address.address;
  return `${tls ? 'https' : 'http'}://${host}:${address.port}`;
}

/** The documented install makes the config file 0600 (docs/agent.md); say so when a secret sits in a readable one. */
function warnIfSecretReadable(file: string, config: AgentConfig, log: Log) {
  if (!config.alerter.secret) return;
  try {
    const mode = statSync(file).mode & 0o777;
    if (mode & 0o077)
      log('warn', `${file} holds alerter.secret but other users may read it (mode ${mode.toString(8)}): chmod 600 it`);
  } catch {}
}

/** What every part of the daemon is handed: the options, the config read at start and the state files. */
interface Startup {
  o: DaemonOptions;
  config: AgentConfig;
  paths: StatePaths;
  runtime: AgentRuntime;
}

/** Starts every part of the agent; throws with a plain message when it cannot. */
export async function startDaemon(o: DaemonOptions): Promise<RunningDaemon> {
  const { deps, log, print } = o;
  const { startup, keys } = await prepare(o);
  const { config, paths, runtime } = startup;
  const { sampler, first } = await startSampler(startup);

  const alerter = createAlerter({
    deps,
    settings: config.alerter,
    host: () => ({ hostname: runtime.facts().hostname, public_ip: runtime.facts().public_ip }),
    post: postJson,
    log,
  });

  // The agent's own bans wait here for the check-ins that report them (docs/protection.md, "Fleet policies").
  const bans = createBanOutbox();
  // The engine is built before the check-in; its ban hook asks for an early check-in once there is one.
  let checkInSoon = () => {};
  const engine = await startProtection(startup, alerter, (ban) => {
    bans.push(ban);
    checkInSoon();
  }).catch((err: Error) => {
    alerter.stop();
    sampler.stop();
    throw err;
  });
  const checkin = startCheckin(startup, bans);
  checkInSoon = () => checkin.soon();
  const routes = apiRoutes(startup, keys, engine);
  const onApiError = (err: Error) => log('error', `request failed: ${err.stack ?? err.message}`);
  // Requests down the outbound link go through the same entry point as the listener's (docs/agent.md).
  const link = createConsoleLink({
    handle: (call) => handleApiCall(call, routes, onApiError),
    keySha256: () => keys.current()?.sha256 ?? null,
    intervalS: () => checkin.status().interval_s,
    heartbeatMs: config.console.linkHeartbeatMs,
    clock: deps.clock,
    log,
  });
  runtime.attach({
    sampler,
    first,
    alerter,
    checkin,
    link,
    protection: engine ?? o.protection ?? monitorOnlyProtection(),
    ...(engine
      ? {
          configureProtection: (settings) => engine.configure(settings),
          enrolmentChanged: () => engine.enrolmentChanged(),
        }
      : {}),
  });

  const tls = config.metrics.tls ? ensureTlsCertificate(paths, runtime.facts().hostname) : null;
  const server = createApiServer(routes, tls, onApiError);
  await listenApi(server, config.metrics.listen).catch(async (err: Error) => {
    // Started but unable to listen: take the firewall table down again before failing.
    await engine?.stop();
    throw err;
  });
  server.on('error', (err) => log('error', `metrics listener: ${err.message}`));
  const url = listenUrl(tls !== null, server.address() as AddressInfo);
  runtime.listening(url, tls?.fingerprint ?? null);
  const control = await openControlSocket(startup, alerter);
  writePidAndEnrolment(startup);

  // Printed last: when this line appears, the API, the pid file and the control socket are all ready.
  if (tls) print(`TLS certificate SHA-256 fingerprint: ${tls.fingerprint}`);
  print(`palisade-agent listening on ${url}`);

  return {
    url,
    alerter,
    reload: runtime.reload,
    async close() {
      sampler.stop();
      alerter.stop();
      checkin.stop();
      link.stop();
      await engine?.stop();
      await closeServer(server);
      if (control) await closeServer(control);
      rmSync(paths.pid, { force: true });
      rmSync(paths.socket, { force: true });
    },
  };
}

/** Reads the config, makes sure no other daemon holds the state directory, and builds the runtime. */
async function prepare(o: DaemonOptions): Promise<{ startup: Startup; keys: KeyCheck }> {
  const config: AgentConfig = loadConfigFile(o.configFile, o.configExplicit);
  warnIfSecretReadable(o.configFile, config, o.log);
  ensureStateDir(o.stateDir);
  const paths = statePaths(o.stateDir);

  const other = await controlRequest<{ pid: number }>(paths.socket, 'GET', '/status', 1000).catch(() => null);
  if (other) throw new Error(`another palisade-agent (pid ${other.pid}) is running with state dir ${o.stateDir}`);

  const keys = new KeyCheck(paths.key);
  if (!keys.current()) {
    // No key is made here: a key printed by the daemon ends up in its log.
    o.print(
      `No agent key yet, so the API lets nobody in. Make one with: palisade-agent key --state-dir ${o.stateDir} (it shows the key once; this daemon accepts it at once)`,
    );
  }
  const runtime = createRuntime({
    deps: o.deps,
    log: o.log,
    configFile: o.configFile,
    configExplicit: o.configExplicit,
    stateDir: o.stateDir,
    enrolmentFile: paths.enrolment,
    config,
    facts: await readFacts(o.deps, config.host.publicIp),
  });
  return { startup: { o, config, paths, runtime }, keys };
}

/** The sampler and its first sample; what the host does not offer is named once in the log. */
async function startSampler({ o, config }: Startup) {
  const sampler = new Sampler(o.deps, {
    intervalMs: config.metrics.intervalMs,
    history: config.metrics.history,
    collectorTimeoutMs: config.metrics.collectorTimeoutMs,
  });
  const first = await sampler.start();
  const unavailable = Object.entries(first.errors);
  if (unavailable.length > 0) {
    o.log('warn', `some measurements are unavailable: ${unavailable.map(([k, v]) => `${k} (${v})`).join('; ')}`);
  }
  return { sampler, first };
}

/** The protection engine, alerting through the alerter; null when a test plugs in its own provider. */
function startProtection(
  { o, config, paths }: Startup,
  alerter: Alerter,
  onBan: (ban: CheckinBan) => void,
): Promise<ProtectionEngine | null> {
  if (o.protection) return Promise.resolve(null);
  return ProtectionEngine.start({
    deps: o.hostRoot ? { ...o.deps, logs: { root: o.hostRoot, journalDirectory: null } } : o.deps,
    log: o.log,
    stateDir: o.stateDir,
    settings: config.protection,
    alert: (event) => alerter.enqueue(event),
    onBan,
    consoleUrl: () => readEnrolment(paths.enrolment)?.console_url ?? null,
    consoleIps: () => {
      try {
        return readEnrolment(paths.enrolment)?.console_ips ?? [];
      } catch {
        return [];
      }
    },
  });
}

/**
 * Check-ins carrying the snapshot, the bans waiting in the outbox and the update report; benchmark
 * runs arrive as their jobs, update offers as the answer's `update`.
 */
function startCheckin({ o, config, runtime }: Startup, bans: ReturnType<typeof createBanOutbox>): Checkin {
  const { deps, log } = o;
  const updates = updateHooks({
    stateDir: o.stateDir,
    consoleUrl: () => checkin.status().console_url,
    ...(o.releaseKeyFile ? { releaseKeyFile: o.releaseKeyFile } : {}),
    version: AGENT_VERSION,
    clock: deps.clock,
    log,
    soon: () => checkin.soon(),
  });
  const checkin: Checkin = createCheckin({
    clock: deps.clock,
    settings: config.checkin,
    post: postJson,
    body: () => {
      const pending = bans.next();
      const update = updates.report();
      return {
        ...checkinBody(runtime.snapshot()),
        ...(pending.length > 0 ? { bans: pending } : {}),
        ...(update ? { update } : {}),
      };
    },
    delivered: (body) => {
      if (Array.isArray(body.bans)) bans.delivered(body.bans as CheckinBan[]);
      updates.delivered((body.update as UpdateReport | undefined) ?? null);
    },
    prepare: () => updates.prepare(),
    offered: (update) => updates.offered(update),
    version: AGENT_VERSION,
    jobs: createJobRunner(
      {
        benchmark: benchmarkJobHandler({
          deps,
          log,
          settings: () => ({ ...runtime.config().bench, dir: runtime.config().bench.dir ?? o.stateDir }),
          consoleUrl: () => checkin.status().console_url,
        }),
      },
      log,
    ),
    log,
  });
  return checkin;
}

/** What the HTTP API (and the outbound link) answers, all read from the runtime when asked. */
function apiRoutes({ o, paths, runtime }: Startup, keys: KeyCheck, engine: ProtectionEngine | null): ApiRoutes {
  return {
    keys,
    whitelist: () => runtime.config().metrics.whitelist,
    health: runtime.health,
    metrics: () => metricsSnapshot(runtime.snapshot()),
    prometheus: () => prometheusText(metricsSnapshot(runtime.snapshot())),
    control: engine
      ? createControlRoutes(
          engine,
          configAccess(o.configFile, engine, () => runtime.reload()),
        )
      : undefined,
    enroll: async (body) => {
      const input = validateEnrolment(body);
      // The console's addresses are kept with the enrolment: never blocked from this moment on.
      const consoleIps = await consoleAddresses(input.console_url);
      saveEnrolment(paths.enrolment, { ...input, enrolled_at: o.deps.clock(), console_ips: consoleIps });
      o.log(
        'info',
        `enrolled with the console at ${input.console_url}; checking in every ${runtime.config().checkin.intervalS} s`,
      );
      runtime.loadEnrolment();
    },
  };
}

/** Listens on `metrics.listen`; the usual failures become a plain message naming the setting. */
function listenApi(server: http.Server, listen: AgentConfig['metrics']['listen']): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${listen.host}:${listen.port}`;
      if (err.code === 'EADDRINUSE')
        reject(new Error(`cannot listen on ${where} (metrics.listen): the address is already in use`));
      else if (err.code === 'EACCES')
        reject(new Error(`cannot listen on ${where} (metrics.listen): permission denied`));
      else if (err.code === 'EADDRNOTAVAIL')
        reject(new Error(`cannot listen on ${where} (metrics.listen): no such local address`));
      else reject(err);
    });
    server.listen(listen.port, listen.host, () => resolve());
  });
}

/** The control socket `info`, `alert-test` and `register` talk to; null (with a warning) when it cannot be made. */
async function openControlSocket({ o, paths, runtime }: Startup, alerter: Alerter): Promise<http.Server | null> {
  try {
    return await listenControlSocket(paths.socket, {
      status: runtime.status,
      alertTest: (count) => {
        if (!runtime.config().alerter.url) throw new Error('alerter.url is not set in the config file');
        const ids: string[] = [];
        let dropped = 0;
        for (let i = 0; i < count; i++) {
          const r = alerter.enqueue({ type: 'test', attack: null });
          if (r.id) ids.push(r.id);
          else dropped++;
        }
        return { queued: ids.length, dropped, ids };
      },
      reloadEnrolment: () => ({ enrolled: runtime.loadEnrolment() !== null }),
    });
  } catch (err) {
    o.log(
      'warn',
      `no control socket at ${paths.socket} (${(err as Error).message}); info and alert-test will not see this daemon`,
    );
    return null;
  }
}

/** The pid file (`reload` signals that pid) and the stored enrolment; neither failing stops the daemon. */
function writePidAndEnrolment({ o, paths, runtime }: Startup) {
  try {
    writeFileAtomic(paths.pid, `${process.pid}\n`, 0o644);
  } catch (err) {
    o.log('warn', `no pid file (${(err as Error).message}); reload needs the pid`);
  }
  try {
    runtime.loadEnrolment();
  } catch (err) {
    o.log('error', `enrolment not loaded: ${(err as Error).message}`);
  }
}

function closeServer(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
}
