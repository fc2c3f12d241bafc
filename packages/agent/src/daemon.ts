import { rmSync, statSync, writeFileSync } from 'node:fs';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Alerter, createAlerter } from './alerter/alerter.js';
import { createControlRoutes } from './api/control-routes.js';
import { controlRequest, listenControlSocket } from './api/control-socket.js';
import { prometheusText } from './api/prometheus.js';
import { type ApiRoutes, createApiServer } from './api/server.js';
import { metricsSnapshot } from './api/snapshot.js';
import { benchmarkJobHandler } from './bench/job.js';
import { checkinBody, type SnapshotParts } from './checkin/body.js';
import { type Checkin, createCheckin } from './checkin/checkin.js';
import { type AgentConfig, ConfigError, loadConfigFile } from './config/config.js';
import { configAccess } from './config/protection-file.js';
import type { AgentDeps } from './deps.js';
import { createJobRunner } from './jobs/job-runner.js';
import { postJson } from './lib/outbound.js';
import type { Log } from './log.js';
import { readFacts } from './measure/facts.js';
import { Sampler } from './measure/sampler.js';
import type { HostFacts } from './measure/types.js';
import { ProtectionEngine } from './protection/engine.js';
import { monitorOnlyProtection, type ProtectionProvider } from './protection/provider.js';
import { KeyCheck, rotateKey } from './state/agent-key.js';
import { readEnrolment, saveEnrolment, validateEnrolment } from './state/enrolment.js';
import { ensureStateDir, statePaths } from './state/state-dir.js';
import { ensureTlsCertificate } from './state/tls-certificate.js';
import { AGENT_VERSION } from './version.js';

export interface DaemonOptions {
  configFile: string;
  /** The file was named on the command line, so it must exist. */
  configExplicit: boolean;
  stateDir: string;
  deps: AgentDeps;
  log: Log;
  /** Plain lines for the operator (listening address, first key). */
  print: (line: string) => void;
  protection?: ProtectionProvider;
}

/** What the control socket's /status answers (and `info` prints). */
export interface DaemonStatus {
  pid: number;
  version: string;
  config_file: string;
  state_dir: string;
  listen_url: string;
  tls_fingerprint: string | null;
  started_at: number;
  reloads: { count: number; last_at: number | null; last_ok: boolean | null; last_error: string | null };
  alerter: ReturnType<Alerter['state']>;
  checkin: ReturnType<Checkin['status']>;
  errors: Record<string, string>;
}

export interface RunningDaemon {
  url: string;
  alerter: Alerter;
  reload(): { ok: boolean; error: string | null };
  close(): Promise<void>;
}

const FACTS_REFRESH_MS = 5 * 60_000;

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

/** Starts every part of the agent; throws with a plain message when it cannot. */
export async function startDaemon(o: DaemonOptions): Promise<RunningDaemon> {
  const { deps, log, print } = o;
  let config: AgentConfig = loadConfigFile(o.configFile, o.configExplicit);
  warnIfSecretReadable(o.configFile, config, log);
  ensureStateDir(o.stateDir);
  const paths = statePaths(o.stateDir);

  const other = await controlRequest<{ pid: number }>(paths.socket, 'GET', '/status', 1000).catch(() => null);
  if (other) throw new Error(`another palisade-agent (pid ${other.pid}) is running with state dir ${o.stateDir}`);

  const keys = new KeyCheck(paths.key);
  if (!keys.current()) {
    const { key } = rotateKey(paths.key, deps.clock());
    print('No agent key existed, so one was made. It is shown only this once:');
    print(`  ${key}`);
    print(
      `Save it in the console with this agent's address. To rotate it: palisade-agent key --state-dir ${o.stateDir}`,
    );
  }

  const startedAt = deps.monotonic();
  let protection = o.protection ?? monitorOnlyProtection();
  let facts: HostFacts = await readFacts(deps, config.host.publicIp);
  let factsAt = deps.monotonic();
  const sampler = new Sampler(deps, {
    intervalMs: config.metrics.intervalMs,
    history: config.metrics.history,
    collectorTimeoutMs: config.metrics.collectorTimeoutMs,
  });
  const first = await sampler.start();
  const unavailable = Object.entries(first.errors);
  if (unavailable.length > 0) {
    log('warn', `some measurements are unavailable: ${unavailable.map(([k, v]) => `${k} (${v})`).join('; ')}`);
  }

  const alerter = createAlerter({
    deps,
    settings: config.alerter,
    host: () => ({ hostname: facts.hostname, public_ip: facts.public_ip }),
    post: postJson,
    log,
  });

  // The protection engine (unless a test plugs in its own provider); it alerts through the alerter.
  const engine = o.protection
    ? null
    : await ProtectionEngine.start({
        deps,
        log,
        stateDir: o.stateDir,
        settings: config.protection,
        alert: (event) => alerter.enqueue(event),
        consoleUrl: () => readEnrolment(paths.enrolment)?.console_url ?? null,
      }).catch((err: Error) => {
        alerter.stop();
        sampler.stop();
        throw err;
      });
  if (engine) protection = engine;

  const parts = (): SnapshotParts => {
    if (deps.monotonic() - factsAt > FACTS_REFRESH_MS) {
      factsAt = deps.monotonic();
      readFacts(deps, config.host.publicIp).then(
        (f) => {
          facts = f;
        },
        () => {},
      );
    }
    return {
      version: AGENT_VERSION,
      agentUptimeS: Math.floor((deps.monotonic() - startedAt) / 1000),
      facts,
      sample: sampler.latest() ?? first,
      protection: protection.protection(),
      attacks: protection.attacks(),
      alerter: alerter.state(),
      checkin: checkin.status(),
    };
  };

  const checkin = createCheckin({
    clock: deps.clock,
    settings: config.checkin,
    post: postJson,
    body: () => checkinBody(parts()),
    version: AGENT_VERSION,
    jobs: createJobRunner(
      {
        benchmark: benchmarkJobHandler({
          deps,
          log,
          settings: () => ({ ...config.bench, dir: config.bench.dir ?? o.stateDir }),
          consoleUrl: () => checkin.status().console_url,
        }),
      },
      log,
    ),
    log,
  });

  const loadEnrolment = () => {
    const enrolment = readEnrolment(paths.enrolment);
    if (enrolment) checkin.start(enrolment);
    return enrolment;
  };

  const routes: ApiRoutes = {
    keys,
    whitelist: () => config.metrics.whitelist,
    health: () => ({
      status: 'ok',
      version: AGENT_VERSION,
      uptime_s: Math.floor((deps.monotonic() - startedAt) / 1000),
    }),
    metrics: () => metricsSnapshot(parts()),
    prometheus: () => prometheusText(metricsSnapshot(parts())),
    control: engine
      ? createControlRoutes(
          engine,
          configAccess(o.configFile, engine, () => reload()),
        )
      : undefined,
    enroll: (body) => {
      const input = validateEnrolment(body);
      saveEnrolment(paths.enrolment, { ...input, enrolled_at: deps.clock() });
      log('info', `enrolled with the console at ${input.console_url}; checking in every ${config.checkin.intervalS} s`);
      loadEnrolment();
    },
  };

  const tls = config.metrics.tls ? ensureTlsCertificate(paths, facts.hostname) : null;
  const server = createApiServer(routes, tls, (err) => log('error', `request failed: ${err.stack ?? err.message}`));
  const listenConfig = config.metrics.listen;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${listenConfig.host}:${listenConfig.port}`;
      if (err.code === 'EADDRINUSE')
        reject(new Error(`cannot listen on ${where} (metrics.listen): the address is already in use`));
      else if (err.code === 'EACCES')
        reject(new Error(`cannot listen on ${where} (metrics.listen): permission denied`));
      else if (err.code === 'EADDRNOTAVAIL')
        reject(new Error(`cannot listen on ${where} (metrics.listen): no such local address`));
      else reject(err);
    });
    server.listen(listenConfig.port, listenConfig.host, () => resolve());
  }).catch(async (err: Error) => {
    // Started but unable to listen: take the firewall table down again before failing.
    await engine?.stop();
    throw err;
  });
  server.on('error', (err) => log('error', `metrics listener: ${err.message}`));
  const url = listenUrl(tls !== null, server.address() as AddressInfo);

  const reloads: DaemonStatus['reloads'] = { count: 0, last_at: null, last_ok: null, last_error: null };
  const status = (): DaemonStatus => ({
    pid: process.pid,
    version: AGENT_VERSION,
    config_file: o.configFile,
    state_dir: o.stateDir,
    listen_url: url,
    tls_fingerprint: tls?.fingerprint ?? null,
    started_at: deps.clock() - Math.floor(deps.monotonic() - startedAt),
    reloads: { ...reloads },
    alerter: alerter.state(),
    checkin: checkin.status(),
    errors: (sampler.latest() ?? first).errors,
  });

  let control: http.Server | null = null;
  try {
    control = await listenControlSocket(paths.socket, {
      status,
      alertTest: (count) => {
        if (!config.alerter.url) throw new Error('alerter.url is not set in the config file');
        const ids: string[] = [];
        let dropped = 0;
        for (let i = 0; i < count; i++) {
          const r = alerter.enqueue({ type: 'test', attack: null });
          if (r.id) ids.push(r.id);
          else dropped++;
        }
        return { queued: ids.length, dropped, ids };
      },
      reloadEnrolment: () => ({ enrolled: loadEnrolment() !== null }),
    });
  } catch (err) {
    log(
      'warn',
      `no control socket at ${paths.socket} (${(err as Error).message}); info and alert-test will not see this daemon`,
    );
  }
  writeFileSync(paths.pid, `${process.pid}\n`, { mode: 0o644 });

  try {
    loadEnrolment();
  } catch (err) {
    log('error', `enrolment not loaded: ${(err as Error).message}`);
  }

  // Printed last: when this line appears, the API, the pid file and the control socket are all ready.
  if (tls) print(`TLS certificate SHA-256 fingerprint: ${tls.fingerprint}`);
  print(`palisade-agent listening on ${url}`);

  function reload(): { ok: boolean; error: string | null } {
    reloads.count++;
    reloads.last_at = deps.clock();
    let next: AgentConfig;
    try {
      next = loadConfigFile(o.configFile, o.configExplicit);
    } catch (err) {
      const message = err instanceof ConfigError ? err.message : (err as Error).message;
      reloads.last_ok = false;
      reloads.last_error = message;
      log('error', `reload refused, the running config is kept:\n${message}`);
      return { ok: false, error: message };
    }
    const old = config;
    config = next;
    if (old.metrics.listen.host !== next.metrics.listen.host || old.metrics.listen.port !== next.metrics.listen.port) {
      log('warn', 'metrics.listen changed: restart the agent to listen on the new address');
    }
    if (old.metrics.tls !== next.metrics.tls) log('warn', 'metrics.tls changed: restart the agent to apply it');
    sampler.configure({
      intervalMs: next.metrics.intervalMs,
      history: next.metrics.history,
      collectorTimeoutMs: next.metrics.collectorTimeoutMs,
    });
    alerter.configure(next.alerter);
    checkin.configure(next.checkin);
    engine?.configure(next.protection);
    if (old.host.publicIp !== next.host.publicIp) {
      readFacts(deps, next.host.publicIp).then(
        (f) => {
          facts = f;
        },
        () => {},
      );
    }
    try {
      loadEnrolment();
    } catch (err) {
      log('error', `enrolment not loaded: ${(err as Error).message}`);
    }
    reloads.last_ok = true;
    reloads.last_error = null;
    log('info', `config reloaded from ${o.configFile}`);
    return { ok: true, error: null };
  }

  return {
    url,
    alerter,
    reload,
    async close() {
      sampler.stop();
      alerter.stop();
      checkin.stop();
      await engine?.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      if (control) {
        control.closeAllConnections();
        await new Promise<void>((resolve) => control!.close(() => resolve()));
      }
      rmSync(paths.pid, { force: true });
      rmSync(paths.socket, { force: true });
    },
  };
}
