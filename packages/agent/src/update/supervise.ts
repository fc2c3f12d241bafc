// `palisade-agent supervise` (docs/agent.md, "The root updater"): on a host without systemd, the
// root process the install script starts. It runs the agent as its child (as the agent's user with
// CAP_NET_ADMIN only, as the systemd unit does), restarts it when it stops, forwards SIGTERM, SIGINT
// and SIGHUP, and applies the updates the agent requests (`applyUpdate`), restarting its child from
// the new executable. It keeps running its own (old) code after an update.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { UPDATE_DIR, UPDATE_REQUEST_FILE } from '@palisade/protocol/agent-update';
import { type AgentControl, applyUpdate, commandFor } from './apply.js';
import { openDirNoFollow, removeIn, writeIn } from './apply-files.js';

export interface SuperviseOptions {
  config: string;
  stateDir: string;
  bin: string;
  /** The agent's user; the child runs as it (with setpriv) when it exists and this runs as root. */
  user: string;
  /** Given to the child's `run` (the key the agent checks downloads with) and used by the updater. */
  releaseKeyFile: string;
  /** Whether `--release-key-file` was given (then it is passed on to `run`). */
  releaseKeyExplicit: boolean;
  log: (line: string) => void;
}

const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
/** Up this long, and the next restart waits the first backoff again. */
const STEADY_MS = 60_000;
const STOP_GRACE_MS = 10_000;
const SUPERVISOR_PID_FILE = 'supervisor.pid';

function userExists(user: string): boolean {
  return spawnSync('getent', ['passwd', user], { stdio: 'ignore' }).status === 0;
}

/** setpriv (util-linux) drops to the agent's user; without it the agent runs as is, as the install script did. */
const setprivFound = () => !spawnSync('setpriv', ['--version'], { stdio: 'ignore' }).error;

/** The child's command: `<bin> run …`, under setpriv as the agent's user when there is one. */
function childCommand(o: SuperviseOptions): [string, string[]] {
  const runArgs = ['run', '--config', o.config, '--state-dir', o.stateDir];
  if (o.releaseKeyExplicit) runArgs.push('--release-key-file', o.releaseKeyFile);
  const [cmd, args] = commandFor(o.bin, runArgs);
  if (process.getuid?.() !== 0 || o.user === 'root' || !userExists(o.user) || !setprivFound()) return [cmd, args];
  return [
    'setpriv',
    [
      `--reuid=${o.user}`,
      `--regid=${o.user}`,
      '--init-groups',
      '--inh-caps=-all,+net_admin',
      '--ambient-caps=-all,+net_admin',
      '--bounding-set=-all,+net_admin',
      '--no-new-privs',
      cmd,
      ...args,
    ],
  ];
}

const describeExit = (code: number | null, signal: NodeJS.Signals | null) =>
  signal ? `signal ${signal}` : `exit code ${code}`;

export async function supervise(o: SuperviseOptions): Promise<void> {
  let child: ChildProcess | null = null;
  let startedAt = 0;
  let failures = 0;
  let timer: NodeJS.Timeout | null = null;
  let stopping = false;
  let applying = false;
  /** Set while the supervisor itself stops the child: that exit is not a crash. */
  let expectExit = false;
  const exits: { at: number; how: string }[] = [];
  let exitWaiters: (() => void)[] = [];

  const start = () => {
    timer = null;
    if (stopping) return;
    const [cmd, args] = childCommand(o);
    const c = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    child = c;
    startedAt = Date.now();
    o.log(`supervise: started the agent (pid ${c.pid}): ${o.bin} run`);
    c.on('error', (err) => o.log(`supervise: could not start ${cmd}: ${err.message}`));
    c.on('exit', (code, signal) => {
      if (child === c) child = null;
      const waiters = exitWaiters;
      exitWaiters = [];
      for (const w of waiters) w();
      if (stopping || expectExit) return;
      const how = describeExit(code, signal);
      exits.push({ at: Date.now(), how });
      if (exits.length > 20) exits.shift();
      failures = Date.now() - startedAt >= STEADY_MS ? 1 : failures + 1;
      const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** (failures - 1));
      o.log(`supervise: the agent stopped (${how}); starting it again in ${delay / 1000} s`);
      timer = setTimeout(start, delay);
    });
  };

  /** Stops the child (SIGTERM, then SIGKILL after the grace) and cancels a pending start. */
  const stopChild = async (signal: NodeJS.Signals = 'SIGTERM') => {
    if (timer) clearTimeout(timer);
    timer = null;
    const c = child;
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const gone = new Promise<void>((r) => exitWaiters.push(r));
    c.kill(signal);
    const kill = setTimeout(() => c.kill('SIGKILL'), STOP_GRACE_MS);
    await gone;
    clearTimeout(kill);
  };

  const control: AgentControl = {
    async restart() {
      expectExit = true;
      try {
        await stopChild();
      } finally {
        expectExit = false;
      }
      failures = 0;
      start();
    },
    async exits() {
      return { exits, stopped: null };
    },
  };

  // supervisor.pid: root's, for the install script and the package's scripts, which check that the
  // pid runs the agent's executable before they signal it.
  let stateDir: ReturnType<typeof openDirNoFollow>;
  try {
    stateDir = openDirNoFollow(o.stateDir);
  } catch (err) {
    throw new Error(`the state directory ${o.stateDir} cannot be used: ${(err as Error).message}`);
  }
  writeIn(stateDir, SUPERVISOR_PID_FILE, `${process.pid}\n`, 0o644, false);

  let finished: () => void = () => {};
  const done = new Promise<void>((r) => {
    finished = r;
  });
  const shutdown = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    o.log(`supervise: ${signal}: stopping the agent`);
    stopChild(signal).then(() => {
      try {
        removeIn(stateDir, SUPERVISOR_PID_FILE);
      } catch {}
      finished();
    });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGHUP', () => {
    if (child?.pid) child.kill('SIGHUP');
  });

  const request = join(o.stateDir, UPDATE_DIR, UPDATE_REQUEST_FILE);
  const poll = setInterval(() => {
    if (applying || stopping) return;
    try {
      lstatSync(request);
    } catch {
      return;
    }
    applying = true;
    applyUpdate({ stateDir: o.stateDir, bin: o.bin, releaseKeyFile: o.releaseKeyFile, control, log: o.log })
      .catch((err: Error) => o.log(`supervise: the update stopped: ${err.message}`))
      .finally(() => {
        applying = false;
      });
  }, 1000);

  start();
  await done;
  clearInterval(poll);
  stateDir.close();
}
