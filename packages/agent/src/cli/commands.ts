import { readFileSync } from 'node:fs';
import { signatureHeader } from '@palisade/protocol/webhook-signature';
import type { AlerterState } from '../alerter/alerter.js';
import { controlRequest } from '../api/control-socket.js';
import { type AgentConfig, loadConfigFile } from '../config/config.js';
import { listenUrl } from '../daemon.js';
import type { AgentDeps } from '../deps.js';
import { OutboundError, postJson } from '../lib/outbound.js';
import { tokenLast4 } from '../lib/tokens.js';
import { publicAddress, readFacts } from '../measure/facts.js';
import { Sampler } from '../measure/sampler.js';
import { findServices } from '../protection/host-services.js';
import { patternSources, REAL_LOG_HOST } from '../protection/log-sources.js';
import type { DaemonStatus } from '../runtime.js';
import { readStoredKey, rotateKey } from '../state/agent-key.js';
import {
  consoleAddresses,
  describeEnrolment,
  readEnrolment,
  saveEnrolment,
  validateEnrolment,
} from '../state/enrolment.js';
import { ensureStateDir, statePaths } from '../state/state-dir.js';
import { ensureTlsCertificate, tlsFingerprint } from '../state/tls-certificate.js';
import { AGENT_VERSION } from '../version.js';

/** A failure the CLI reports as one plain line and a non-zero exit. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

export interface CliContext {
  deps: AgentDeps;
  print: (line: string) => void;
}

export interface ConfigChoice {
  file: string;
  explicit: boolean;
}

async function daemonStatus(stateDir: string): Promise<DaemonStatus | null> {
  return controlRequest<DaemonStatus>(statePaths(stateDir).socket, 'GET', '/status', 2000).catch(() => null);
}

/** The address to give the console: the running daemon's, else the configured one with a reachable host. */
function metricsAddress(config: AgentConfig, deps: AgentDeps, running: DaemonStatus | null): string {
  const { host, port } = config.metrics.listen;
  const wildcard = host === '0.0.0.0' || host === '::';
  const reachable = wildcard
    ? (config.host.publicIp ??
      publicAddress(deps.host.networkAddresses()) ??
      deps.host.networkAddresses()[0] ??
      '127.0.0.1')
    : host;
  if (running) {
    const m = /:(\d+)$/.exec(running.listen_url);
    return listenUrl(config.metrics.tls, { address: reachable, port: Number(m?.[1] ?? port) });
  }
  if (port === 0)
    return `${config.metrics.tls ? 'https' : 'http'}://${reachable}:<port chosen at start; metrics.listen has port 0>`;
  return listenUrl(config.metrics.tls, { address: reachable, port });
}

export async function keyCommand(ctx: CliContext, stateDir: string, choice: ConfigChoice): Promise<void> {
  const config = loadConfigFile(choice.file, choice.explicit);
  ensureStateDir(stateDir);
  const paths = statePaths(stateDir);
  const previous = readStoredKey(paths.key);
  const { key } = rotateKey(paths.key, ctx.deps.clock());
  const running = await daemonStatus(stateDir);
  ctx.print(`Metrics address: ${metricsAddress(config, ctx.deps, running)}`);
  ctx.print(`Agent key:       ${key}`);
  if (config.metrics.tls) {
    const tls = ensureTlsCertificate(paths, ctx.deps.host.hostname());
    ctx.print(`TLS fingerprint: ${tls.fingerprint} (SHA-256; pin it in the console)`);
  }
  ctx.print('The key is shown only now; the agent keeps only its hash.');
  if (previous) {
    ctx.print(
      `The previous key (…${previous.last4}) stopped working. Save the new key for this server in the console.`,
    );
  }
}

export async function infoCommand(ctx: CliContext, stateDir: string, choice: ConfigChoice, asJson: boolean) {
  const paths = statePaths(stateDir);
  let configProblem: string | null = null;
  let config: AgentConfig | null = null;
  try {
    config = loadConfigFile(choice.file, choice.explicit);
  } catch (err) {
    configProblem = (err as Error).message;
  }
  const key = (() => {
    try {
      return readStoredKey(paths.key);
    } catch {
      return null;
    }
  })();
  let enrolment: ReturnType<typeof readEnrolment> = null;
  let enrolmentProblem: string | null = null;
  try {
    enrolment = readEnrolment(paths.enrolment);
  } catch (err) {
    enrolmentProblem = (err as Error).message;
  }
  const running = await daemonStatus(stateDir);
  let measured: Record<string, string> = {};
  if (!running) {
    // No daemon to ask: measure once here, so info still says what this host can report.
    const sampler = new Sampler(ctx.deps, { intervalMs: 2000, history: 1, collectorTimeoutMs: 1000 });
    measured = (await sampler.measure()).errors;
  }
  const facts = await readFacts(ctx.deps, config?.host.publicIp ?? null);
  const info = {
    version: AGENT_VERSION,
    config_file: choice.file,
    config_ok: configProblem === null,
    config_error: configProblem,
    state_dir: stateDir,
    metrics_address: config ? metricsAddress(config, ctx.deps, running) : null,
    key: key ? { last4: key.last4, created_at: key.created_at } : null,
    tls_fingerprint: running?.tls_fingerprint ?? tlsFingerprint(paths.tlsCert),
    enrolment: enrolment ? { console_url: enrolment.console_url, token_last4: tokenLast4(enrolment.token) } : null,
    enrolment_error: enrolmentProblem,
    host: facts,
    daemon: running,
    measurement_errors: running ? running.errors : measured,
    log_patterns: patternSources(stateDir),
    services: findServices(REAL_LOG_HOST),
  };
  if (asJson) {
    ctx.print(JSON.stringify(info, null, 2));
    return;
  }
  const p = ctx.print;
  p(`palisade-agent ${AGENT_VERSION}`);
  p(
    `config:       ${choice.file}${configProblem ? ` — NOT USABLE:\n${configProblem}` : config && !choice.explicit ? '' : ''}`,
  );
  p(`state dir:    ${stateDir}`);
  p(`address:      ${info.metrics_address ?? 'unknown (config not usable)'}`);
  p(
    `key:          ${key ? `…${key.last4}, made ${new Date(key.created_at).toISOString()}` : 'none yet (palisade-agent key makes one)'}`,
  );
  if (info.tls_fingerprint) p(`TLS:          SHA-256 ${info.tls_fingerprint}`);
  p(
    `host:         ${facts.hostname}, ${facts.os}, kernel ${facts.kernel}, ${facts.arch}, ${facts.cores} cores, ${facts.mem_total_mb} MB`,
  );
  p(`public IP:    ${facts.public_ip ?? 'none found (set host.public_ip)'}`);
  p(`enrolment:    ${enrolment ? describeEnrolment(enrolment) : (enrolmentProblem ?? 'not enrolled')}`);
  if (!running) p('daemon:       not running (or its control socket is unreachable)');
  else {
    p(`daemon:       running, pid ${running.pid}, ${running.listen_url}`);
    const c = running.checkin;
    if (c.enrolled) {
      p(
        `check-in:     ${c.state}${c.last_success_at ? `, last success ${new Date(c.last_success_at).toISOString()}` : ''}${c.last_error ? `, last error: ${c.last_error}` : ''}`,
      );
    }
    const l = running.link;
    if (l && l.mode === 'outbound') {
      p(
        `console link: ${l.state}${l.connected_at ? ` since ${new Date(l.connected_at).toISOString()}` : ''}${l.last_error ? `, last error: ${l.last_error}` : ''} (${linkModeSource(enrolment, config)})`,
      );
    }
    p(`alerter:      ${describeAlerter(running.alerter)}`);
    if (running.reloads.count > 0) {
      p(`last reload:  ${running.reloads.last_ok ? 'applied' : `refused: ${running.reloads.last_error}`}`);
    }
  }
  const errors = Object.entries(info.measurement_errors);
  p(
    `measurements: ${errors.length === 0 ? 'all available' : errors.map(([k, v]) => `${k} unavailable (${v})`).join('; ')}`,
  );
  // The services the shipped patterns protect, as found here (docs/protection.md, "Services found on the host").
  const found = Object.entries(info.services).filter(([, at]) => at !== null);
  const missing = Object.entries(info.services).filter(([, at]) => at === null);
  const protect = config?.protection.protect;
  p(
    `services:     ${found.length > 0 ? `found ${found.map(([s, at]) => `${s} (${at})`).join(', ')}` : 'none found'}${missing.length > 0 ? `; not found: ${missing.map(([s]) => s).join(', ')}` : ''}; protection.protect = ${protect === null || protect === undefined ? '(unset)' : protect === 'auto' ? 'auto' : protect.join(',')}`,
  );
  // Which log each block pattern reads here (`source: auto` resolved) and whether this user can read it.
  const uid = process.getuid?.();
  p(
    `log patterns: sources as ${uid === 0 ? 'root' : `uid ${uid}`} sees them (docs/protection.md, "Where a pattern reads")`,
  );
  if (info.log_patterns.error) p(`  patterns.json not read: ${info.log_patterns.error}`);
  const width = Math.max(12, ...info.log_patterns.rows.map((r) => r.name.length));
  for (const r of info.log_patterns.rows) {
    p(
      `  ${r.name.padEnd(width)} ${r.enabled ? 'enabled' : 'shipped'}, ${r.source}: ${r.reads} — ${r.problem ?? 'readable'}`,
    );
  }
}

/** Where the outbound mode came from: the enrolment (the console could not reach this agent) or the config. */
function linkModeSource(enrolment: ReturnType<typeof readEnrolment>, config: AgentConfig | null): string {
  if (enrolment?.connect === 'outbound')
    return config?.console.connect === 'outbound'
      ? 'console.connect = outbound, and kept with the enrolment'
      : 'kept with the enrolment: the console could not reach this agent when it registered';
  return 'console.connect = outbound';
}

function describeAlerter(a: AlerterState): string {
  if (!a.webhook_set) return 'off (alerter.url not set)';
  return `queued ${a.queued}, sent ${a.sent}, dropped ${a.dropped}${a.last_error ? `, last error: ${a.last_error}` : ''}`;
}

function readPid(file: string): number {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new CliError(`no running daemon: ${file} does not exist`);
  }
  const pid = Number.parseInt(text.trim(), 10);
  if (!Number.isInteger(pid) || pid <= 0) throw new CliError(`${file} does not hold a process id`);
  return pid;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function reloadCommand(ctx: CliContext, stateDir: string): Promise<void> {
  const paths = statePaths(stateDir);
  const pid = readPid(paths.pid);
  const before = await daemonStatus(stateDir);
  try {
    process.kill(pid, 'SIGHUP');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ESRCH') throw new CliError(`no daemon with pid ${pid} (stale ${paths.pid})`);
    throw new CliError(`cannot signal pid ${pid}: ${(err as Error).message}`);
  }
  if (!before) {
    ctx.print(`sent SIGHUP to pid ${pid}; its log says whether the config was applied`);
    return;
  }
  for (let i = 0; i < 50; i++) {
    const now = await daemonStatus(stateDir);
    if (now && now.reloads.count > before.reloads.count) {
      if (now.reloads.last_ok) {
        ctx.print(`reloaded ${now.config_file}`);
        return;
      }
      throw new CliError(`reload refused, the daemon keeps its running config:\n${now.reloads.last_error}`);
    }
    await pause(100);
  }
  throw new CliError(`sent SIGHUP to pid ${pid}, but the daemon did not report a reload`);
}

export async function enrollCommand(ctx: CliContext, stateDir: string, consoleUrl: string, token: string) {
  let input: { console_url: string; token: string };
  try {
    input = validateEnrolment({ console_url: consoleUrl, token });
  } catch (err) {
    const message = (err as Error).message.replace(/^console_url:/, '--console:').replace(/^token:/, '--token:');
    throw new CliError(message, 2);
  }
  ensureStateDir(stateDir);
  const paths = statePaths(stateDir);
  // The console's addresses are kept with the enrolment: the agent never blocks them (docs/protection.md).
  const consoleIps = await consoleAddresses(input.console_url);
  saveEnrolment(paths.enrolment, { ...input, enrolled_at: ctx.deps.clock(), console_ips: consoleIps });
  ctx.print(`enrolled with ${input.console_url}`);
  const told = await controlRequest(paths.socket, 'POST', '/enrolment', 2000).then(
    () => true,
    () => false,
  );
  ctx.print(
    told
      ? 'the running daemon checks in from now on; palisade-agent info shows how it goes'
      : 'no running daemon was reached; it checks in once started',
  );
}

export async function alertTestCommand(ctx: CliContext, stateDir: string, choice: ConfigChoice, count: number) {
  const config = loadConfigFile(choice.file, choice.explicit);
  const paths = statePaths(stateDir);
  const running = await daemonStatus(stateDir);
  if (running) {
    if (!running.alerter.webhook_set) throw new CliError('alerter.url is not set in the running config');
    const before = running.alerter;
    const answer = await controlRequest<{ queued: number; dropped: number; ids: string[] }>(
      paths.socket,
      'POST',
      `/alert-test?count=${count}`,
    ).catch((err: Error) => {
      throw new CliError(err.message);
    });
    ctx.print(
      `queued ${answer.queued} test event(s) in the running daemon${answer.dropped ? `, ${answer.dropped} dropped (queue full)` : ''}`,
    );
    const a = config.alerter;
    const budget = Math.min(120_000, (a.retries + 1) * a.timeoutMs + a.backoffMs * 2 ** (a.retries + 1) + 2000);
    const deadline = Date.now() + budget;
    while (Date.now() < deadline) {
      const now = (await daemonStatus(stateDir))?.alerter;
      if (!now) break;
      const settled = now.sent - before.sent + (now.dropped - before.dropped);
      if (settled >= count) {
        ctx.print(`delivered ${now.sent - before.sent}, dropped ${now.dropped - before.dropped}`);
        if (now.sent - before.sent < answer.queued)
          throw new CliError(`delivery failed: ${now.last_error ?? 'unknown error'}`);
        return;
      }
      await pause(200);
    }
    ctx.print('still waiting for delivery; palisade-agent info shows the alerter state');
    return;
  }
  // No daemon: send one event straight from here, so the webhook can be tried before the first start.
  if (!config.alerter.url) throw new CliError(`alerter.url is not set in ${choice.file}`);
  const facts = await readFacts(ctx.deps, config.host.publicIp);
  const body = JSON.stringify({
    id: crypto.randomUUID(),
    type: 'test',
    ts: ctx.deps.clock(),
    host: { hostname: facts.hostname, public_ip: facts.public_ip },
    attack: null,
  });
  const headers: Record<string, string> = {};
  if (config.alerter.secret) {
    headers['x-palisade-signature'] = signatureHeader(config.alerter.secret, body, Math.floor(ctx.deps.clock() / 1000));
  }
  try {
    const answer = await postJson(config.alerter.url, body, headers, config.alerter.timeoutMs);
    if (answer.status < 200 || answer.status > 299) throw new CliError(`the endpoint answered HTTP ${answer.status}`);
    ctx.print(`test event delivered to ${config.alerter.url} (HTTP ${answer.status})`);
  } catch (err) {
    if (err instanceof CliError) throw err;
    if (err instanceof OutboundError && err.kind === 'timeout') {
      throw new CliError(`the endpoint did not answer within ${config.alerter.timeoutMs} ms`);
    }
    throw new CliError(`could not reach the endpoint: ${(err as Error).message}`);
  }
}
