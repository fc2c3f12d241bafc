import { rmSync } from 'node:fs';
import type { AgentRegistered, AgentRegistration, RegistrationConnect } from '@palisade/protocol/enrolment';
import { controlRequest } from '../api/control-socket.js';
import { loadConfigFile } from '../config/config.js';
import { OutboundError, postJson } from '../lib/outbound.js';
import { isWellFormedToken } from '../lib/tokens.js';
import type { DaemonStatus } from '../runtime.js';
import { rotateKey } from '../state/agent-key.js';
import {
  consoleAddresses,
  describeEnrolment,
  readEnrolment,
  saveEnrolment,
  validateConsoleUrl,
} from '../state/enrolment.js';
import { ensureStateDir, readStateFile, statePaths, writeFileAtomic } from '../state/state-dir.js';
import { tlsFingerprint } from '../state/tls-certificate.js';
import { AGENT_VERSION } from '../version.js';
import { type CliContext, CliError, type ConfigChoice } from './commands.js';

export interface RegisterOptions {
  console: string;
  token: string;
  name?: string;
  url?: string;
  force: boolean;
  /** How the console is to reach this agent; default: `console.connect` of the config. */
  connect?: RegistrationConnect;
  /** How long to wait for the daemon to be up (the install script starts it just before). */
  waitMs: number;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitForDaemon(socket: string, waitMs: number): Promise<DaemonStatus | null> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const status = await controlRequest<DaemonStatus>(socket, 'GET', '/status', 2000).catch(() => null);
    if (status || Date.now() >= deadline) return status;
    await pause(250);
  }
}

/**
 * `palisade-agent register`: the agent adds itself to the console with an enrolment token
 * (docs/agent.md, "One-line install"). It makes a new metrics key, sends it with its name, port and
 * version to `POST /api/agent/register`; the console checks it back through /health and answers the
 * daemon token, which is stored as `enroll` stores it. Already enrolled: nothing changes (the key,
 * lists and baseline stay), unless `--force`.
 */
export async function registerCommand(ctx: CliContext, stateDir: string, choice: ConfigChoice, o: RegisterOptions) {
  let consoleUrl: string;
  try {
    consoleUrl = validateConsoleUrl(o.console);
  } catch (err) {
    throw new CliError((err as Error).message.replace(/^console_url:/, '--console:'), 2);
  }
  if (!isWellFormedToken('enrolment', o.token)) {
    throw new CliError('--token: expected the enrolment token (enr_…) the console showed under Add server', 2);
  }
  const config = loadConfigFile(choice.file, choice.explicit);
  ensureStateDir(stateDir);
  const paths = statePaths(stateDir);
  const enrolled = (() => {
    try {
      return readEnrolment(paths.enrolment);
    } catch {
      return null;
    }
  })();
  if (enrolled && !o.force) {
    ctx.print(`already registered: ${describeEnrolment(enrolled)}`);
    ctx.print('nothing changed (key, lists and baseline kept); --force registers again as a new server');
    return;
  }
  const running = await waitForDaemon(paths.socket, o.waitMs);
  if (!running) {
    throw new CliError(
      'no running daemon answered on its control socket: start it first (systemctl start palisade-agent, ' +
        'or palisade-agent run); the console checks the agent back through /health',
    );
  }
  const port = Number(/:(\d+)$/.exec(running.listen_url)?.[1]);
  const fingerprint = config.metrics.tls ? tlsFingerprint(paths.tlsCert) : null;
  // Read without following a link: root must never copy a file the agent's user pointed it at.
  let previousKey: string | null;
  try {
    previousKey = readStateFile(paths.key);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new CliError((err as Error).message);
    previousKey = null;
  }
  const { key } = rotateKey(paths.key, ctx.deps.clock());
  const restoreKey = () => {
    if (previousKey === null) rmSync(paths.key, { force: true });
    else writeFileAtomic(paths.key, previousKey);
  };
  const body: AgentRegistration = {
    name: o.name ?? ctx.deps.host.hostname(),
    api_key: key,
    api_url: o.url ?? null,
    port,
    tls: config.metrics.tls,
    tls_fingerprint: fingerprint,
    version: AGENT_VERSION,
    connect: o.connect ?? config.console.connect,
  };
  let answer: { status: number; body: string };
  try {
    answer = await postJson(
      `${consoleUrl}/api/agent/register`,
      JSON.stringify(body),
      { authorization: `Bearer ${o.token}` },
      30_000,
    );
  } catch (err) {
    restoreKey();
    const why = err instanceof OutboundError ? err.message : String(err);
    throw new CliError(`could not reach the console at ${consoleUrl}: ${why}`);
  }
  let parsed: { data?: AgentRegistered; error?: string } = {};
  try {
    parsed = JSON.parse(answer.body);
  } catch {}
  if (answer.status !== 201 || !parsed.data?.daemon_token) {
    restoreKey();
    // Exit 3 when the token itself was refused (401): only then does a new token help.
    throw new CliError(
      `the console refused the registration (HTTP ${answer.status}): ${parsed.error ?? answer.body.slice(0, 200)}`,
      answer.status === 401 ? 3 : 1,
    );
  }
  const registered = parsed.data;
  const outbound = registered.connect === 'outbound';
  saveEnrolment(paths.enrolment, {
    console_url: consoleUrl,
    token: registered.daemon_token,
    enrolled_at: ctx.deps.clock(),
    // The console's addresses are kept with the enrolment: the agent never blocks them (docs/protection.md).
    console_ips: await consoleAddresses(consoleUrl),
    ...(outbound ? { connect: 'outbound' as const } : {}),
  });
  ctx.print(`registered with ${consoleUrl} as "${registered.name}" (server ${registered.server_id})`);
  ctx.print(
    outbound
      ? 'the console cannot reach this agent: it keeps an outbound link to the console instead (kept with its enrolment)'
      : `the console reaches this agent at ${registered.api_url}`,
  );
  const told = await controlRequest(paths.socket, 'POST', '/enrolment', 2000).then(
    () => true,
    () => false,
  );
  ctx.print(
    told
      ? 'the running daemon checks in from now on; palisade-agent info shows how it goes'
      : 'the daemon did not answer; it checks in once restarted',
  );
}
