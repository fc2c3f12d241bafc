import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export {
  type ConsoleProcess,
  runConsoleCli,
  startConsoleProcess,
} from '@palisade/console/test-support';

export const AGENT_CLI = fileURLToPath(new URL('../../../packages/agent/dist/src/cli.js', import.meta.url));

/** A temp dir removed at cleanup. */
export function tempDir(prefix: string): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface AgentProcess {
  child: ChildProcess;
  url: string;
  key: string;
  stateDir: string;
  configFile: string;
  output(): string;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Rotates (or creates) the agent key in a state dir and returns the raw key the CLI printed. */
export function agentKey(stateDir: string, configFile: string): string {
  const res = spawnSync(process.execPath, [AGENT_CLI, 'key', '--state-dir', stateDir, '--config', configFile], {
    encoding: 'utf8',
  });
  const key = /agk_[0-9A-Za-z]+/.exec(`${res.stdout}${res.stderr}`)?.[0];
  if (res.status !== 0 || !key)
    throw new Error(`palisade-agent key failed (${res.status}): ${res.stdout}${res.stderr}`);
  return key;
}

/**
 * Starts a real agent daemon on a free loopback port. `config` lines are appended to the config
 * file (dotted keys); the key is made with `palisade-agent key` before the daemon starts.
 */
export async function startAgent(config: Record<string, string> = {}): Promise<AgentProcess> {
  const dir = tempDir('palisade-agent-');
  const stateDir = join(dir.path, 'state');
  const configFile = join(dir.path, 'agent.conf');
  const lines = { 'metrics.listen': '127.0.0.1:0', 'checkin.interval_s': '5', ...config };
  writeFileSync(
    configFile,
    `${Object.entries(lines)
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n')}\n`,
  );
  const key = agentKey(stateDir, configFile);
  const daemon = await runAgentDaemon(configFile, stateDir);
  return {
    ...daemon,
    key,
    stateDir,
    configFile,
    async stop(signal = 'SIGTERM') {
      await daemon.stop(signal);
      dir.remove();
    },
  };
}

/** `palisade-agent run` on an existing config file and state dir, until it says where it listens. */
export async function runAgentDaemon(configFile: string, stateDir: string) {
  const child = spawn(process.execPath, [AGENT_CLI, 'run', '--config', configFile, '--state-dir', stateDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setInterval(() => {
      const match = /listening on (https?:\/\/\S+)/.exec(out);
      if (match) {
        clearInterval(timer);
        resolve(match[1]!);
      }
    }, 20);
    exited.then(() => {
      clearInterval(timer);
      reject(new Error(`agent exited before listening:\n${out}`));
    });
  });
  return {
    child,
    url,
    output: () => out,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/** Runs a CLI (a compiled `cli.js`) to its end with a bare environment; its exit code and output. */
export function runCli(
  cli: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
