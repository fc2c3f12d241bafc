import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runToEnd, spawnCaptured } from '@palisade/testkit';

export const CONSOLE_CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

/**
 * Test consoles hash passwords at scrypt N=2^12 (PALISADE_PASSWORD_COST) instead of 2^17: the suite
 * signs up and signs in some thousand times, and at the default each costs a third of a second of a
 * core. The default itself is held by auth.test.ts ("the password is stored as an scrypt hash").
 */
export const TEST_ENV = { PALISADE_PASSWORD_COST: '12' } as const;

export interface ConsoleProcess {
  child: ChildProcess;
  url: string;
  output(): string;
  /** Standard output alone (the log records). */
  stdout(): string;
  /** The first match of `pattern` in the output, or null when the process exits first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Runs `palisade-console` (this checkout's, or the script `cli` names, e.g. one installed from the
 * npm tarball) with the given environment and waits until it prints where it listens.
 */
export async function startConsoleProcess(
  env: Record<string, string>,
  args: string[] = [],
  cli = CONSOLE_CLI,
): Promise<ConsoleProcess> {
  const p = spawnCaptured(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH ?? '', PALISADE_PORT: '0', PALISADE_LOG_LEVEL: 'warn', ...TEST_ENV, ...env },
  });
  const match = await p.waitFor(/listening on (http:\/\/\S+)/);
  if (!match) throw new Error(`console exited with ${await p.exited} before listening:\n${p.output()}`);
  return { child: p.child, url: match[1]!, output: p.output, stdout: p.stdout, waitFor: p.waitFor, kill: p.stop };
}

/** Runs the CLI to completion and returns its exit code and output. */
export async function runConsoleCli(
  env: Record<string, string>,
  args: string[],
  input?: string,
): Promise<{ code: number | null; out: string }> {
  const { code, out } = await runToEnd(process.execPath, [CONSOLE_CLI, ...args], {
    env: { PATH: process.env.PATH ?? '', PALISADE_LOG_LEVEL: 'warn', ...TEST_ENV, ...env },
    input: input ?? '',
  });
  return { code, out };
}
