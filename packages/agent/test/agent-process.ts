// Starts the real agent (dist/src/cli.js) as a child process on loopback, and the local pieces the
// process tests talk to: a webhook receiver and an HTTP client. Every start registers its cleanup.
import { type ChildProcess, spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const AGENT_CLI = fileURLToPath(new URL('../src/cli.js', import.meta.url));

export function tempDir(prefix = 'palisade-agent-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export function writeConfig(file: string, lines: Record<string, string>): void {
  writeFileSync(
    file,
    `${Object.entries(lines)
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n')}\n`,
  );
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  out: string;
}

/** Runs the CLI to completion (asynchronously, so servers in this process keep answering). */
export function runCli(args: string[]): Promise<CliResult> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [AGENT_CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('close', (code) => resolve({ code, stdout, stderr, out: stdout + stderr }));
  });
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
export function spawnAgent(
  args: string[],
): Promise<
  | { child: ChildProcess; url: string; output(): string; stop(): Promise<void> }
  | { exitCode: number | null; out: string }
> {
  const child = spawn(process.execPath, [AGENT_CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve) => {
    const onData = (d: Buffer) => {
      out += d;
      const m = /palisade-agent listening on (https?:\/\/\S+)/.exec(out);
      if (m) {
        resolve({
          child,
          url: m[1]!,
          output: () => out,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            await exited;
          },
        });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    exited.then((exitCode) => resolve({ exitCode, out }));
  });
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

/** Polls until `check` returns something other than undefined (no timing is asserted). */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
) {
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
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

export interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * A local webhook receiver. `mode` decides the answer: 200, 500, or `hold` (the request waits
 * until `release()`, the way a stalled endpoint behaves).
 */
export async function startReceiver(initial: 'ok' | 'fail' | 'hold' = 'ok') {
  let mode = initial;
  const deliveries: Delivery[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body });
      if (mode === 'hold') held.push(res);
      else if (mode === 'fail') res.writeHead(500).end('{"error":"boom"}');
      else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    held,
    setMode(next: 'ok' | 'fail' | 'hold') {
      mode = next;
    },
    /** Answers every held request with 200. */
    release() {
      for (const res of held.splice(0)) res.writeHead(200).end('{"ok":true}');
    },
    async close() {
      for (const res of held.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Verifies `X-Palisade-Signature: t=…,v1=…` against the raw body. */
export function signatureValid(header: string | string[] | undefined, body: string, secret: string): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(String(header ?? ''));
  if (!m) return false;
  return createHmac('sha256', secret).update(`${m[1]}.${body}`).digest('hex') === m[2];
}
