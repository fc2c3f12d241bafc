import type { Alerter } from './alerter/alerter.js';
import type { ConsoleLink } from './api/console-link.js';
import type { SnapshotParts } from './checkin/body.js';
import type { Checkin } from './checkin/checkin.js';
import { type AgentConfig, ConfigError, loadConfigFile } from './config/config.js';
import type { AgentDeps } from './deps.js';
import type { Log } from './log.js';
import { readFacts } from './measure/facts.js';
import type { Sampler } from './measure/sampler.js';
import type { HostFacts, Sample } from './measure/types.js';
import type { ProtectionProvider } from './protection/provider.js';
import { readEnrolment } from './state/enrolment.js';
import { AGENT_VERSION } from './version.js';

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
  /** The outbound link to the console (`console.connect`). */
  link: ReturnType<ConsoleLink['status']> | null;
  errors: Record<string, string>;
}

/** The running parts the runtime reports on and reconfigures; attached once the daemon made them. */
export interface RuntimeParts {
  sampler: Sampler;
  /** The first sample, shown until the sampler has a newer one. */
  first: Sample;
  alerter: Alerter;
  checkin: Checkin;
  /** The outbound link (`console.connect = outbound`), started with the enrolment. */
  link?: ConsoleLink;
  protection: ProtectionProvider;
  /** Reconfigures protection on reload (absent when a test plugs in its own provider). */
  configureProtection?: (settings: AgentConfig['protection']) => void;
  /** Tells protection the enrolment changed, so its console is never blocked from now on. */
  enrolmentChanged?: () => Promise<void>;
}

const FACTS_REFRESH_MS = 5 * 60_000;

/**
 * The agent's running state in one object — config in force, host facts, uptime, status and reload —
 * shared by the daemon's wiring, the HTTP API, the control socket and (through /status) the CLI.
 */
export function createRuntime(o: {
  deps: AgentDeps;
  log: Log;
  configFile: string;
  configExplicit: boolean;
  stateDir: string;
  enrolmentFile: string;
  config: AgentConfig;
  facts: HostFacts;
}) {
  const { deps, log } = o;
  let config = o.config;
  let facts = o.facts;
  let factsAt = deps.monotonic();
  const startedAt = deps.monotonic();
  const reloads: DaemonStatus['reloads'] = { count: 0, last_at: null, last_ok: null, last_error: null };
  let parts: RuntimeParts | null = null;
  let listenUrl = '';
  let tlsFingerprint: string | null = null;

  const running = (): RuntimeParts => {
    if (!parts) throw new Error('the agent runtime has no parts attached yet');
    return parts;
  };
  const refreshFacts = (publicIp: string | null) =>
    readFacts(deps, publicIp).then(
      (f) => {
        facts = f;
      },
      () => {},
    );
  const uptimeS = () => Math.floor((deps.monotonic() - startedAt) / 1000);

  const runtime = {
    config: () => config,
    facts: () => facts,
    attach(p: RuntimeParts) {
      parts = p;
    },
    listening(url: string, fingerprint: string | null) {
      listenUrl = url;
      tlsFingerprint = fingerprint;
    },

    health: () => ({ status: 'ok', version: AGENT_VERSION, uptime_s: uptimeS() }),

    /** Everything /metrics, Prometheus and the check-in report, from memory (facts refreshed every 5 min). */
    snapshot(): SnapshotParts {
      const p = running();
      if (deps.monotonic() - factsAt > FACTS_REFRESH_MS) {
        factsAt = deps.monotonic();
        void refreshFacts(config.host.publicIp);
      }
      return {
        version: AGENT_VERSION,
        agentUptimeS: uptimeS(),
        facts,
        sample: p.sampler.latest() ?? p.first,
        protection: p.protection.protection(),
        attacks: p.protection.attacks(),
        alerter: p.alerter.state(),
        checkin: p.checkin.status(),
      };
    },

    status(): DaemonStatus {
      const p = running();
      return {
        pid: process.pid,
        version: AGENT_VERSION,
        config_file: o.configFile,
        state_dir: o.stateDir,
        listen_url: listenUrl,
        tls_fingerprint: tlsFingerprint,
        started_at: deps.clock() - Math.floor(deps.monotonic() - startedAt),
        reloads: { ...reloads },
        alerter: p.alerter.state(),
        checkin: p.checkin.status(),
        link: p.link?.status() ?? null,
        errors: (p.sampler.latest() ?? p.first).errors,
      };
    },

    /** Starts (or restarts) check-ins, and the outbound link when configured, with the stored enrolment; null when not enrolled. */
    loadEnrolment() {
      const enrolment = readEnrolment(o.enrolmentFile);
      running()
        .enrolmentChanged?.()
        .catch((err: Error) => log('warn', `the console's address was not learnt: ${err.message}`));
      if (enrolment) running().checkin.start(enrolment);
      // A registration the console could not reach back keeps the link whatever the file says.
      running().link?.configure(enrolment?.connect === 'outbound' ? 'outbound' : config.console.connect, enrolment);
      return enrolment;
    },

    /** Re-reads the config file; a bad file is refused and the running config stays in force. */
    reload(): { ok: boolean; error: string | null } {
      const p = running();
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
      if (
        old.metrics.listen.host !== next.metrics.listen.host ||
        old.metrics.listen.port !== next.metrics.listen.port
      ) {
        log('warn', 'metrics.listen changed: restart the agent to listen on the new address');
      }
      if (old.metrics.tls !== next.metrics.tls) log('warn', 'metrics.tls changed: restart the agent to apply it');
      p.sampler.configure({
        intervalMs: next.metrics.intervalMs,
        history: next.metrics.history,
        collectorTimeoutMs: next.metrics.collectorTimeoutMs,
      });
      p.alerter.configure(next.alerter);
      p.checkin.configure(next.checkin);
      p.configureProtection?.(next.protection);
      if (old.host.publicIp !== next.host.publicIp) void refreshFacts(next.host.publicIp);
      try {
        runtime.loadEnrolment();
      } catch (err) {
        log('error', `enrolment not loaded: ${(err as Error).message}`);
      }
      reloads.last_ok = true;
      reloads.last_error = null;
      log('info', `config reloaded from ${o.configFile}`);
      return { ok: true, error: null };
    },
  };
  return runtime;
}

export type AgentRuntime = ReturnType<typeof createRuntime>;
