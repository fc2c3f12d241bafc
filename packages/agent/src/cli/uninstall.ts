import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { OutboundError, sendJson } from '../lib/outbound.js';
import { readEnrolment } from '../state/enrolment.js';
import { readFileNoFollow, statePaths } from '../state/state-dir.js';
import { type CliContext, CliError } from './commands.js';

export interface UninstallOptions {
  /** Also remove the config, the state (key, enrolment, lists) and the log. */
  purge: boolean;
  /** First remove this server from the console, with the daemon token it checks in with. */
  forget: boolean;
}

const EXE_BIN = '/usr/local/bin/palisade-agent';
const SCRIPT_UNIT = '/etc/systemd/system/palisade-agent.service';
/** The root updater's units the install script writes beside its own (docs/agent.md, "The root updater"). */
const SCRIPT_UPDATE_UNITS = ['palisade-agent-update.path', 'palisade-agent-update.service'];
const CONFIG_DIR = '/etc/palisade-agent';
const LOG = '/var/log/palisade-agent.log';

/** The parent of a process, from /proc/<pid>/stat (the field after the command's closing parenthesis). */
function parentOf(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return 0;
  }
}

/** Processes running the agent's executable (the single executable's path), this command and its callers aside. */
function agentProcesses(bin: string): number[] {
  const mine = new Set<number>();
  for (let p = process.pid; p > 1; p = parentOf(p)) mine.add(p);
  const found: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || mine.has(Number(name))) continue;
    try {
      const exe = readlinkSync(`/proc/${name}/exe`);
      if (exe === bin || exe === `${bin} (deleted)`) found.push(Number(name));
    } catch {}
  }
  return found;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** SIGTERM, up to 10 s to finish, then SIGKILL; answers the pids that ran. */
async function stopAgents(bin: string): Promise<number[]> {
  const pids = agentProcesses(bin);
  for (const pid of pids) process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 100 && agentProcesses(bin).length > 0; i++) await pause(100);
  for (const pid of agentProcesses(bin)) process.kill(pid, 'SIGKILL');
  return pids;
}

/**
 * `palisade-agent supervise` (the install script's, without systemd) restarts the agent when it
 * stops: it goes first, and stops its agent itself. Its pid file is in a directory the agent's user
 * owns: the pid is signalled only when it runs the agent's executable.
 */
async function stopSupervisor(bin: string, stateDir: string): Promise<number | null> {
  let pid: number;
  try {
    pid = Number.parseInt(readFileNoFollow(join(stateDir, 'supervisor.pid')).slice(0, 32).trim(), 10);
  } catch {
    return null;
  }
  if (!Number.isInteger(pid) || pid <= 1 || !agentProcesses(bin).includes(pid)) return null;
  process.kill(pid, 'SIGTERM');
  for (let i = 0; i < 150 && agentProcesses(bin).includes(pid); i++) await pause(100);
  return pid;
}

/** `DELETE /api/agent/server` with the daemon token; nothing is removed here when the console cannot say yes. */
async function forget(ctx: CliContext, stateDir: string) {
  let enrolment: ReturnType<typeof readEnrolment>;
  try {
    enrolment = readEnrolment(statePaths(stateDir).enrolment);
  } catch (err) {
    throw new CliError(`--forget: the enrolment cannot be read (${(err as Error).message}); nothing was removed`);
  }
  if (!enrolment) {
    throw new CliError('--forget: this agent is not registered with a console (no enrolment); nothing was removed');
  }
  const url = `${enrolment.console_url}/api/agent/server`;
  let answer: { status: number; body: string };
  try {
    answer = await sendJson('DELETE', url, '', { authorization: `Bearer ${enrolment.token}` }, 30_000);
  } catch (err) {
    const why = err instanceof OutboundError ? err.message : String(err);
    throw new CliError(
      `--forget: could not reach the console at ${enrolment.console_url}: ${why}; nothing was removed ` +
        '(run again, or without --forget and remove the server in the console)',
    );
  }
  if (answer.status === 200) ctx.print(`removed this server from the console at ${enrolment.console_url}`);
  else if (answer.status === 401) ctx.print(`the console at ${enrolment.console_url} no longer knows this server`);
  else {
    throw new CliError(
      `--forget: the console refused (HTTP ${answer.status}): ${answer.body.slice(0, 200)}; nothing was removed`,
    );
  }
}

/** Whether dpkg holds the package (installed, not only its config files). */
function packageInstalled(): boolean {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format, not a template
  const res = spawnSync('dpkg-query', ['-W', '-f=${Status}', 'palisade-agent'], { encoding: 'utf8' });
  return res.status === 0 && / installed$/.test(res.stdout.trim());
}

/**
 * `palisade-agent uninstall [--purge] [--forget]` (docs/agent.md, "Uninstall"): the package through
 * dpkg (its maintainer scripts stop the agent whatever the init system and remove its nftables
 * table), or the single executable the install script put in /usr/local/bin, the same way by
 * itself. Says what is left.
 */
export async function uninstallCommand(ctx: CliContext, stateDir: string, o: UninstallOptions) {
  if (process.getuid?.() !== 0) throw new CliError('run as root (sudo palisade-agent uninstall)', 2);
  if (o.forget) await forget(ctx, stateDir);
  if (packageInstalled()) {
    const action = o.purge ? '--purge' : '--remove';
    const res = spawnSync('dpkg', [action, 'palisade-agent'], { stdio: 'inherit' });
    if (res.status !== 0) throw new CliError(`dpkg ${action} palisade-agent failed (above)`);
    return;
  }
  if (!existsSync(EXE_BIN)) throw new CliError(`no palisade-agent package and no ${EXE_BIN}: nothing to remove`);
  const units = [...SCRIPT_UPDATE_UNITS, 'palisade-agent.service'];
  if (existsSync('/run/systemd/system') && existsSync(SCRIPT_UNIT)) {
    // The updater first: nothing swaps or restarts the agent while it goes.
    spawnSync('systemctl', ['disable', '--now', ...units], { stdio: 'ignore' });
    for (const unit of units) rmSync(`/etc/systemd/system/${unit}`, { force: true });
    spawnSync('systemctl', ['daemon-reload'], { stdio: 'ignore' });
  } else for (const unit of units) rmSync(`/etc/systemd/system/${unit}`, { force: true });
  const supervisor = await stopSupervisor(EXE_BIN, stateDir);
  if (supervisor !== null) ctx.print(`stopped its supervisor (pid ${supervisor})`);
  const stopped = await stopAgents(EXE_BIN);
  if (stopped.length > 0) ctx.print(`stopped the agent (pid ${stopped.join(', ')})`);
  const table = spawnSync('nft', ['list', 'table', 'inet', 'palisade'], { stdio: 'ignore' });
  if (table.status === 0 && spawnSync('nft', ['delete', 'table', 'inet', 'palisade']).status === 0) {
    ctx.print('removed its nftables table (inet palisade)');
  }
  rmSync(EXE_BIN, { force: true });
  rmSync(`${EXE_BIN}.prev`, { force: true });
  ctx.print(`removed ${EXE_BIN}`);
  if (o.purge) {
    for (const path of [CONFIG_DIR, stateDir, LOG]) rmSync(path, { recursive: true, force: true });
    ctx.print(`removed ${CONFIG_DIR}, ${stateDir} and ${LOG}`);
  } else {
    ctx.print(`kept ${CONFIG_DIR}, ${stateDir} (key, enrolment, lists) and ${LOG}: --purge removes them`);
  }
}
