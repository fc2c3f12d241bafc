import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const CONSOLE_CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

export interface ConsoleProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs `palisade-console` with the given environment and waits until it prints where it listens. */
export function startConsoleProcess(env: Record<string, string>, args: string[] = []): Promise<ConsoleProcess> {
  const child = spawn(process.execPath, [CONSOLE_CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', PALISADE_PORT: '0', PALISADE_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const onData = () => {
      const match = /listening on (http:\/\/\S+)/.exec(out);
      if (!match) return;
      child.stdout!.off('data', onData);
      resolve({
        child,
        url: match[1]!,
        output: () => out,
        async kill(signal = 'SIGTERM') {
          if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          return exited;
        },
      });
    };
    child.stdout!.on('data', onData);
    exited.then((code) => reject(new Error(`console exited with ${code} before listening:\n${out}`)));
  });
}

/** Runs the CLI to completion and returns its exit code and output. */
export function runConsoleCli(
  env: Record<string, string>,
  args: string[],
  input?: string,
): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CONSOLE_CLI, ...args], {
      env: { PATH: process.env.PATH ?? '', PALISADE_LOG_LEVEL: 'warn', ...env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    child.stdin.end(input ?? '');
    child.on('exit', (code) => resolve({ code, out }));
  });
}
