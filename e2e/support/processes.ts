import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runToEnd, spawnCaptured, tempDir } from '@palisade/testkit';

export {
  type ConsoleProcess,
  runConsoleCli,
  startConsoleProcess,
} from '@palisade/console/test-support';
export { eventually, tempDir } from '@palisade/testkit';

export const AGENT_CLI = fileURLToPath(new URL('../../../packages/agent/dist/src/cli.js', import.meta.url));

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
 * Starts a real agent daemon on a free loopback port, monitor-only. `config` lines are written to the
 * config file (dotted keys, over the defaults); the key is made with `palisade-agent key` before the
 * daemon starts.
 */
export async function startAgent(
  config: Record<string, string> = {},
  /** Logs and the services found are looked up under this fixture tree instead of / (`run --host-root`). */
  hostRoot?: string,
): Promise<AgentProcess> {
  const dir = tempDir('palisade-agent-');
  const stateDir = join(dir.path, 'state');
  const configFile = join(dir.path, 'agent.conf');
  // Monitor-only unless a test asks for nftables (in a namespace of its own): files run side by side,
  // and agents on this host must not share its `inet palisade` table.
  const lines = {
    'metrics.listen': '127.0.0.1:0',
    'checkin.interval_s': '5',
    'protection.backend': 'monitor',
    ...config,
  };
  writeFileSync(
    configFile,
    `${Object.entries(lines)
      .map(([k, v]) => `${k} = ${v}`)
      .join('\n')}\n`,
  );
  const key = agentKey(stateDir, configFile);
  const daemon = await runAgentDaemon(configFile, stateDir, hostRoot ? ['--host-root', hostRoot] : []);
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
export async function runAgentDaemon(configFile: string, stateDir: string, extra: string[] = []) {
  const args = ['run', '--config', configFile, '--state-dir', stateDir, ...extra];
  const p = spawnCaptured(process.execPath, [AGENT_CLI, ...args]);
  const match = await p.waitFor(/listening on (https?:\/\/\S+)/);
  if (!match) throw new Error(`agent exited before listening:\n${p.output()}`);
  return {
    child: p.child,
    url: match[1]!,
    output: p.output,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      await p.stop(signal);
    },
  };
}

/** Runs a CLI (a compiled `cli.js`) to its end with a bare environment; its exit code and output. */
export async function runCli(
  cli: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { code, stdout, stderr } = await runToEnd(process.execPath, [cli, ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  return { code, stdout, stderr };
}

const DPKG_LOCK = '/tmp/palisade-e2e-dpkg.lock';

/**
 * The suites that install the system-wide `palisade-agent` package (packaging, install) take turns:
 * one's `dpkg --purge` would pull the package from under the other. A directory made atomically is
 * the lock; its `pid` file lets a lock left by a dead run be taken over.
 */
export async function holdDpkgLock(): Promise<() => void> {
  for (;;) {
    try {
      mkdirSync(DPKG_LOCK);
      writeFileSync(join(DPKG_LOCK, 'pid'), String(process.pid));
      return () => rmSync(DPKG_LOCK, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let holder = 0;
      try {
        holder = Number(readFileSync(join(DPKG_LOCK, 'pid'), 'utf8'));
      } catch {}
      if (holder > 0 && !isRunning(holder)) rmSync(DPKG_LOCK, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 500));
    }
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A TCP relay on loopback to a local port: a direct path to an agent the test can cut. */
export async function tcpRelay(port: number): Promise<{ url: string; cut(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const relay = createServer((inbound) => {
    const upstream = connect(port, '127.0.0.1');
    for (const s of [inbound, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    inbound.pipe(upstream).pipe(inbound);
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    async cut() {
      if (!relay.listening) return;
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => relay.close(resolve));
    },
  };
}

/**
 * One address in front of several consoles, as a load balancer is: each new TCP connection goes to
 * the next port in turn (a WebSocket stays with the process it landed on).
 */
export async function tcpBalancer(
  ports: number[],
  host = '127.0.0.1',
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  let next = 0;
  const balancer = createServer((inbound) => {
    const upstream = connect(ports[next++ % ports.length]!, '127.0.0.1');
    for (const s of [inbound, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    inbound.pipe(upstream).pipe(inbound);
  });
  await new Promise<void>((resolve) => balancer.listen(0, host, resolve));
  return {
    port: (balancer.address() as AddressInfo).port,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => balancer.close(resolve));
    },
  };
}

/** One JSON call to a console with a session cookie; the answer's status and parsed body. */
export type ConsoleCall = (
  base: string,
  method: string,
  path: string,
  body?: unknown,
  // biome-ignore lint/suspicious/noExplicitAny: test answers are checked field by field
) => Promise<{ status: number; body: any }>;

/** Registers an account on a console through its API and answers the session cookie it set. */
export async function signUp(base: string, user: { email: string; password: string; name: string }): Promise<string> {
  const reg = await fetch(`${base}/api/auth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(user),
  });
  if (reg.status !== 201) throw new Error(`register ${user.email}: HTTP ${reg.status} ${await reg.text()}`);
  return reg.headers.get('set-cookie')!.split(';')[0]!;
}

/**
 * An account registered on a console with a catalog product taken (the first, or `catalogId`: 2 has
 * benchmarks), and a caller that sends its session cookie (to this console or another process
 * behind the same database).
 */
export async function accountWithProduct(
  base: string,
  email: string,
  catalogId = 1,
): Promise<{ productId: number; call: ConsoleCall }> {
  const cookie = await signUp(base, { email, password: 'test-password-123', name: email.split('@')[0]! });
  const call: ConsoleCall = async (to, method, path, body) => {
    const res = await fetch(`${to}${path}`, {
      method,
      headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: await res.json() };
  };
  const product = await call(base, 'POST', '/api/products', { catalog_id: catalogId });
  if (product.status !== 201) throw new Error(`take catalog product ${catalogId}: HTTP ${product.status}`);
  return { productId: product.body.data.product.id, call };
}
