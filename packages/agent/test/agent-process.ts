// Starts the real agent (dist/src/cli.js) as a child process on loopback, and the local pieces the
// process tests talk to: a webhook receiver and an HTTP client. Every start registers its cleanup.
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type RunResult, runToEnd, spawnCaptured, tempDir } from '@palisade/testkit';

export const AGENT_CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

/**
 * The agent under test: this checkout's `dist/src/cli.js` run by Node, or the program
 * `PALISADE_TEST_AGENT_BIN` names (the packaged single executable, or `/usr/bin/palisade-agent`
 * as the .deb and the install script put it), so the same real-daemon tests hold the packaged
 * agent to the same behaviour (e2e/install.test.ts runs them that way).
 */
export const AGENT_COMMAND: readonly string[] = process.env.PALISADE_TEST_AGENT_BIN
  ? [process.env.PALISADE_TEST_AGENT_BIN]
  : [process.execPath, AGENT_CLI];

const agentArgs = (args: string[]) => [...AGENT_COMMAND.slice(1), ...args];

export function writeConfig(file: string, lines: Record<string, string>): void {
  writeFileSync(
    file,
    `${Object.entries(lines)
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n')}\n`,
  );
}

export type CliResult = RunResult;

/** Runs the CLI to completion (asynchronously, so servers in this process keep answering). */
export function runCli(args: string[]): Promise<CliResult> {
  return runToEnd(AGENT_COMMAND[0]!, agentArgs(args));
}

export const keyFrom = (text: string) => /agk_[0-9A-Za-z]+/.exec(text)?.[0];

export interface AgentProcess {
  child: ChildProcess;
  url: string;
  key: string;
  dir: string;
  stateDir: string;
  configFile: string;
  output(): string;
  stop(): Promise<void>;
}

/** Writes a config (loopback, port 0 unless given), makes a key with `palisade-agent key`, starts `run`. */
export async function startAgent(config: Record<string, string> = {}): Promise<AgentProcess> {
  const dir = tempDir();
  const stateDir = join(dir.path, 'state');
  const configFile = join(dir.path, 'agent.conf');
  // A generous collector bound: on a loaded test machine a /proc read must not count as a failure.
  // Monitor-only unless a test asks otherwise: parallel agents must not share the host's nftables table.
  writeConfig(configFile, {
    'metrics.listen': '127.0.0.1:0',
    'metrics.collector_timeout_ms': '10000',
    'protection.backend': 'monitor',
    ...config,
  });
  const made = await runCli(['key', '--state-dir', stateDir, '--config', configFile]);
  const key = keyFrom(made.stdout);
  if (made.code !== 0 || !key) {
    dir.remove();
    throw new Error(`palisade-agent key failed (${made.code}): ${made.out}`);
  }
  const started = await spawnAgent(['run', '--config', configFile, '--state-dir', stateDir]);
  if ('exitCode' in started) {
    dir.remove();
    throw new Error(`agent exited (${started.exitCode}) before listening:\n${started.out}`);
  }
  return {
    ...started,
    key,
    dir: dir.path,
    stateDir,
    configFile,
    async stop() {
      await started.stop();
      dir.remove();
    },
  };
}

/**
 * Spawns the CLI and waits for the `listening on` line, or for the process to exit (then its
 * exit code and output are returned instead).
 */
export async function spawnAgent(
  args: string[],
): Promise<
  | { child: ChildProcess; url: string; output(): string; stop(): Promise<void> }
  | { exitCode: number | null; out: string }
> {
  const p = spawnCaptured(AGENT_COMMAND[0]!, agentArgs(args));
  const m = await p.waitFor(/palisade-agent listening on (https?:\/\/\S+)/);
  if (!m) return { exitCode: await p.exited, out: p.output() };
  return {
    child: p.child,
    url: m[1]!,
    output: p.output,
    async stop() {
      await p.stop();
    },
  };
}

export interface Answer {
  status: number;
  body: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read answer fields directly and assert on them
  json: any;
}

/** One request with its own connection; `key` becomes the Bearer header. */
export function request(
  url: string,
  opts: { key?: string; method?: string; body?: unknown; headers?: Record<string, string>; localAddress?: string } = {},
): Promise<Answer> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  const payload =
    opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: opts.method ?? 'GET',
        agent: false,
        rejectUnauthorized: false,
        ...(opts.localAddress ? { localAddress: opts.localAddress } : {}),
        headers: {
          ...(opts.key ? { authorization: `Bearer ${opts.key}` } : {}),
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
          ...opts.headers,
        },
      },
      (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => {
          let json: unknown;
          try {
            json = JSON.parse(body);
          } catch {}
          resolve({ status: res.statusCode ?? 0, body, json });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

export {
  closedPort,
  type Delivery,
  eventually,
  signatureValid,
  startReceiver,
  tempDir,
} from '@palisade/testkit';
