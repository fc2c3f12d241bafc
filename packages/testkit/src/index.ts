// Test support for every package's tests and e2e (never imported by product code): real child
// processes with their output captured, polling without timed assertions, temp dirs, and a local
// webhook receiver standing in for a user's endpoint.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

/** A temp dir and its removal. */
export function tempDir(prefix = 'palisade-test-'): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface Captured {
  child: ChildProcess;
  /** stdout and stderr as they arrived. */
  output(): string;
  stdout(): string;
  stderr(): string;
  /** The exit code (null after a signal). */
  exited: Promise<number | null>;
  /** Resolves with the first match of `pattern` in the output, or null when the process exits first. */
  waitFor(pattern: RegExp): Promise<RegExpExecArray | null>;
  /** Signals the process unless it has ended, and waits for its exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts a process with its output captured; `input` is written to its stdin, which is then closed. */
export function spawnCaptured(
  file: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Captured {
  const child = spawn(file, args, {
    ...(opts.env ? { env: opts.env } : {}),
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  let out = '';
  let stdout = '';
  let stderr = '';
  const listeners = new Set<() => void>();
  const heard = () => {
    for (const l of listeners) l();
  };
  child.stdout!.on('data', (d) => {
    stdout += d;
    out += d;
    heard();
  });
  child.stderr!.on('data', (d) => {
    stderr += d;
    out += d;
    heard();
  });
  child.stdin?.end(opts.input);
  // 'close' comes after the output streams end, so nothing printed is missed.
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return {
    child,
    output: () => out,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitFor(pattern) {
      return new Promise((resolve) => {
        const check = () => {
          const m = pattern.exec(out);
          if (!m) return;
          listeners.delete(check);
          resolve(m);
        };
        listeners.add(check);
        check();
        exited.then(() => {
          listeners.delete(check);
          resolve(pattern.exec(out));
        });
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stdout and stderr as they arrived. */
  out: string;
}

/** Runs a process to its end (asynchronously, so servers in this process keep answering). */
export async function runToEnd(
  file: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<RunResult> {
  const p = spawnCaptured(file, args, opts);
  const code = await p.exited;
  return { code, stdout: p.stdout(), stderr: p.stderr(), out: p.output() };
}

/** Polls `check` until it returns something other than undefined (no timing is asserted). */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 30_000,
): Promise<T> {
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

/** The whole body of a request. */
export function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (d) => {
      body += d;
    });
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

export interface Delivery {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type ReceiverMode = 'ok' | 'fail' | 'hold';

/**
 * A local webhook receiver. `mode` decides the answer: 200, 500, or `hold` (the request waits
 * until `release()`, the way a stalled endpoint behaves).
 */
export async function startReceiver(initial: ReceiverMode = 'ok') {
  let mode = initial;
  const deliveries: Delivery[] = [];
  const held: http.ServerResponse[] = [];
  const server = http.createServer(async (req, res) => {
    const body = await readBody(req);
    deliveries.push({ headers: req.headers, body });
    if (mode === 'hold') held.push(res);
    else if (mode === 'fail') res.writeHead(500).end('{"error":"boom"}');
    else res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    deliveries,
    held,
    setMode(next: ReceiverMode) {
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

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

/**
 * For suites that need root and system tools (network namespaces, nftables): why they cannot run
 * here (not Linux, not root, one of `tools` not installed), or null. In CI such a suite must run:
 * a test failing with the reason is registered (`hint` says how CI provides it); elsewhere it is
 * skipped with the reason. Answers the `describe` options.
 */
export function rootSuite(name: string, tools: string[], hint = ''): { skip: string | false } {
  let why: string | null = null;
  if (process.platform !== 'linux') why = 'not Linux';
  else if (process.getuid?.() !== 0) why = 'not running as root';
  else
    why =
      tools
        .map((t) => (spawnSync(t, ['--version'], { stdio: 'ignore' }).error ? `\`${t}\` is not installed` : null))
        .find(Boolean) ?? null;
  if (why && process.env.CI) {
    test(`the ${name} suite can run`, () => {
      throw new Error(`CI must run the ${name} suite, but ${why}${hint ? ` (${hint})` : ''}`);
    });
  }
  return { skip: why ? `skipped: ${why}` : false };
}
