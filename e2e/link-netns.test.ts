// Agents behind a firewall, for real: each agent runs in a network namespace of its own whose
// nftables drop every connection to the agent's port from the start, so no console (in the host
// namespace) ever reaches it, yet the agent reaches the console. The agent adds itself with an
// enrolment token as the one-line install does (`register --connect auto`): the console cannot
// reach it, so it is registered `outbound` and the whole fleet path goes through its link — online,
// live metrics, a blacklist write through the control proxy, a benchmark to Done · Verified, a
// rotated agent key checked and saved — cutting the link gives 502, and it comes back by itself.
// Then the same on three consoles behind one address (PostgreSQL and Redis), the link held by one
// of them. In CI a missing `ip`, `nft` or root fails the suite; locally it is skipped with the reason.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { rootSuite, runToEnd, spawnCaptured } from '@palisade/testkit';
import {
  AGENT_CLI,
  accountWithProduct,
  type ConsoleCall,
  type ConsoleProcess,
  eventually,
  startConsoleProcess,
  tcpBalancer,
  tempDir,
} from './support/processes.js';

const tag = (process.pid % 100000).toString(36);
const AGENT_PORT = 9740;
/**
 * Both ends' link heartbeat (console PALISADE_LINK_HEARTBEAT_MS, agent `console.link_heartbeat_ms`):
 * a cut link is dead after 5 s instead of the default 25 s, still well above a loaded machine's stalls.
 */
const LINK_HEARTBEAT_MS = 2000;
const pgUrl = process.env.PALISADE_TEST_DATABASE_URL;
const redisUrl = process.env.PALISADE_TEST_REDIS_URL;

const suite = rootSuite('netns link', ['ip', 'nft'], '.ci/run installs nftables and iproute2');

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });

/** A namespace on its own /24 with a veth to the host; nothing reaches the agent's port inside it. */
function firewalledNamespace(n: number) {
  const ns = `pll-${tag}-${n}`;
  const hostIp = `10.79.${n}.1`;
  const agentIp = `10.79.${n}.2`;
  const inNs = (cmd: string[], input?: string) =>
    execFileSync('ip', ['netns', 'exec', ns, ...cmd], { encoding: 'utf8', ...(input ? { input } : {}) });
  const remove = () => spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  return {
    ns,
    hostIp,
    agentIp,
    inNs,
    remove,
    create() {
      remove();
      sh('ip', ['netns', 'add', ns]);
      sh('ip', ['link', 'add', `lh-${tag}-${n}`, 'type', 'veth', 'peer', 'name', `la-${tag}-${n}`, 'netns', ns]);
      sh('ip', ['addr', 'add', `${hostIp}/24`, 'dev', `lh-${tag}-${n}`]);
      sh('ip', ['link', 'set', `lh-${tag}-${n}`, 'up']);
      inNs(['ip', 'link', 'set', 'lo', 'up']);
      inNs(['ip', 'addr', 'add', `${agentIp}/24`, 'dev', `la-${tag}-${n}`]);
      inNs(['ip', 'link', 'set', `la-${tag}-${n}`, 'up']);
      inNs(
        ['nft', '-f', '-'],
        `table inet palisade_link_test {
  chain input { type filter hook input priority -10; policy accept; tcp dport ${AGENT_PORT} drop; }
}
`,
      );
    },
    /** The agent's packets to the console vanish: no FIN, no reset, only silence. */
    cut(consolePort: number) {
      inNs(
        ['nft', '-f', '-'],
        `table inet palisade_link_cut {
  chain output { type filter hook output priority -10; policy accept; ip daddr ${hostIp} tcp dport ${consolePort} drop; }
}
`,
      );
    },
    restore() {
      inNs(['nft', 'delete', 'table', 'inet', 'palisade_link_cut']);
    },
  };
}

/** The agent daemon inside the namespace; no `console.connect` in its config: registration decides. */
async function startFirewalledAgent(net: ReturnType<typeof firewalledNamespace>, dir: string) {
  const configFile = join(dir, 'agent.conf');
  const stateDir = join(dir, 'state');
  writeFileSync(
    configFile,
    `metrics.listen = ${net.agentIp}:${AGENT_PORT}\ncheckin.interval_s = 5\nprotection.backend = monitor\n` +
      `bench.max_seconds = 20\nbench.max_disk_mb = 64\nconsole.link_heartbeat_ms = ${LINK_HEARTBEAT_MS}\n`,
  );
  const daemon = spawnCaptured('ip', [
    'netns',
    'exec',
    net.ns,
    process.execPath,
    AGENT_CLI,
    'run',
    '--config',
    configFile,
    '--state-dir',
    stateDir,
  ]);
  assert.ok(await daemon.waitFor(/listening on (https?:\/\/\S+)/), daemon.output());
  return { daemon, configFile, stateDir };
}

/**
 * What the install script runs, inside the namespace: `register --connect auto` with an enrolment
 * token. The console's check back cannot reach the agent, so it answers `outbound`.
 */
async function registerByToken(
  net: ReturnType<typeof firewalledNamespace>,
  agent: { configFile: string; stateDir: string },
  o: { call: ConsoleCall; base: string; consoleUrl: string; productId: number },
): Promise<number> {
  const created = await o.call(o.base, 'POST', '/api/enrolment-tokens', { product_id: o.productId });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  // Not spawnSync: the balancer in front of the consoles runs in this process.
  const res = await runToEnd('ip', [
    'netns',
    'exec',
    net.ns,
    process.execPath,
    AGENT_CLI,
    'register',
    '--console',
    o.consoleUrl,
    '--token',
    created.body.data.token,
    '--connect',
    'auto',
    '--name',
    'firewalled',
    '--config',
    agent.configFile,
    '--state-dir',
    agent.stateDir,
  ]);
  const output = res.out;
  assert.equal(res.code, 0, output);
  assert.match(output, /cannot reach this agent: it keeps an outbound link/);
  return Number(/\(server (\d+)\)/.exec(output)?.[1]);
}

/** Polls the server's page on a console until it is online with its link up. */
async function onlineThroughLink(call: ConsoleCall, base: string, serverId: number) {
  return eventually(
    'the server online with its link up',
    async () => {
      const server = (await call(base, 'GET', `/api/servers/${serverId}`)).body.data.server;
      return server.state === 'online' && server.connection.link === 'up' ? server : undefined;
    },
    60_000,
  );
}

/** Live metrics and a blacklist write, then its lookup, through the console at `base`. */
async function metricsAndBlacklist(call: ConsoleCall, base: string, serverId: number, ip: string) {
  const metrics = await call(base, 'GET', `/api/servers/${serverId}/metrics`);
  assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
  assert.equal(typeof metrics.body.cpu.pct, 'number');
  const added = await call(base, 'POST', `/api/servers/${serverId}/control?path=blacklist`, { ip });
  assert.ok(added.status >= 200 && added.status < 300, JSON.stringify(added.body));
  const lookup = await call(base, 'GET', `/api/servers/${serverId}/control?path=blacklist&ip=${ip}`);
  assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
  assert.equal(lookup.body.decided_by, 'blacklist');
}

/** Cuts the agent's path to the console: `bases` all answer 502 at once; the path back brings metrics back. */
async function cutAndRecover(
  net: ReturnType<typeof firewalledNamespace>,
  consolePort: number,
  call: ConsoleCall,
  bases: string[],
  serverId: number,
) {
  net.cut(consolePort);
  for (const base of bases) {
    const failed = await call(base, 'GET', `/api/servers/${serverId}/metrics`);
    assert.equal(failed.status, 502, `${base}: ${JSON.stringify(failed.body)}`);
    assert.equal(failed.body.error, 'agent unreachable');
  }
  // Heartbeats every LINK_HEARTBEAT_MS here, dead after 2.5 of them in silence (packages/protocol/src/link.ts).
  await eventually(
    'the console notices the dead link',
    async () => {
      const c = (await call(bases[0]!, 'GET', `/api/servers/${serverId}`)).body.data.server.connection;
      return c.link === 'down' ? c : undefined;
    },
    60_000,
  );
  net.restore();
  for (const base of bases) {
    const back = await eventually(
      `metrics through the new link (${base})`,
      async () => {
        const res = await call(base, 'GET', `/api/servers/${serverId}/metrics`);
        return res.status === 200 ? res : undefined;
      },
      90_000,
    );
    assert.equal(typeof back.body.cpu.pct, 'number');
  }
}

/** A free TCP port on every address, for a console whose public address must be known before it starts. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '0.0.0.0', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

const consoleEnv = {
  PALISADE_ALLOW_PRIVATE_TARGETS: '1',
  PALISADE_BOOTSTRAP_ADMIN: '0',
  PALISADE_CHECKIN_INTERVAL_S: '5',
  PALISADE_AGENT_TIMEOUT_MS: '2000',
  PALISADE_LINK_HEARTBEAT_MS: String(LINK_HEARTBEAT_MS),
};

describe('an agent the console cannot reach, added by token (root, netns, nftables)', suite, () => {
  const dir = tempDir('palisade-link-netns-');
  const net = firewalledNamespace(1);
  let port = 0;
  let consoleProc: ConsoleProcess | undefined;
  let agent: Awaited<ReturnType<typeof startFirewalledAgent>> | undefined;
  let call: ConsoleCall;
  let serverId = 0;
  const base = () => `http://127.0.0.1:${port}`;

  const cleanup = () => {
    const child = agent?.daemon.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    net.remove();
  };
  process.on('exit', cleanup);

  before(async () => {
    net.create();
    port = await freePort();
    consoleProc = await startConsoleProcess({
      ...consoleEnv,
      PALISADE_DATA_DIR: join(dir.path, 'console'),
      PALISADE_HOST: '0.0.0.0',
      PALISADE_PORT: String(port),
      PALISADE_PUBLIC_URL: `http://${net.hostIp}:${port}`,
    });
    agent = await startFirewalledAgent(net, dir.path);
    // Product 2 of the catalog has benchmarks (e2e/support/processes.ts).
    const account = await accountWithProduct(base(), `netns-link-${process.pid}@example.com`, 2);
    call = account.call;
    serverId = await registerByToken(net, agent, {
      call,
      base: base(),
      consoleUrl: `http://${net.hostIp}:${port}`,
      productId: account.productId,
    });
  });

  after(async () => {
    await agent?.daemon.stop();
    await consoleProc?.kill();
    cleanup();
    dir.remove();
  });

  test('registered as outbound without inbound reach, it goes online through its link', async () => {
    const direct = await call(base(), 'POST', '/api/servers/test', {
      api_url: `http://${net.agentIp}:${AGENT_PORT}`,
      api_key: 'agk_00000000000000000000000000000000',
    });
    assert.equal(direct.body.data.reachable, false, 'the direct path is dropped');
    const server = await onlineThroughLink(call, base(), serverId);
    assert.equal(server.connection.mode, 'outbound');
    await metricsAndBlacklist(call, base(), serverId, '198.51.100.23');
  });

  test('a benchmark is handed to the agent and ends Done, its hardware matching the check-ins', async () => {
    const created = await call(base(), 'POST', `/api/servers/${serverId}/benchmarks`, { label: 'behind NAT' });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const finished = await eventually(
      'the run to finish',
      async () => {
        const latest = (await call(base(), 'GET', `/api/servers/${serverId}/benchmarks`)).body.data.runs[0];
        return latest && (latest.status === 'done' || latest.status === 'failed') ? latest : undefined;
      },
      120_000,
    );
    assert.equal(finished.status, 'done', `${finished.error}\n${finished.log}`);
    // Cores and memory as the check-ins say (the speed-up check depends on the machine's other load).
    const checks = finished.checks as { name: string; ok: boolean }[];
    for (const name of ['cores match', 'memory matches'])
      assert.equal(checks.find((c) => c.name === name)?.ok, true, JSON.stringify(checks));
    assert.equal(
      finished.verified,
      checks.every((c) => c.ok),
    );
  });

  test('a rotated agent key is checked and saved through the link', async () => {
    const rotated = await runToEnd('ip', [
      'netns',
      'exec',
      net.ns,
      process.execPath,
      AGENT_CLI,
      'key',
      '--config',
      agent!.configFile,
      '--state-dir',
      agent!.stateDir,
    ]);
    const key = /agk_[0-9A-Za-z]+/.exec(rotated.out)?.[0];
    assert.ok(key, rotated.out);
    const refused = await call(base(), 'GET', `/api/servers/${serverId}/metrics`);
    assert.equal(refused.status, 502);
    assert.match(refused.body.error, /the agent rejected the key/);
    // The new key is asked down the link: the agent's address would not answer.
    const saved = await call(base(), 'PATCH', `/api/servers/${serverId}`, { api_key: key });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const metrics = await call(base(), 'GET', `/api/servers/${serverId}/metrics`);
    assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
  });

  test('cutting the link gives 502 at once; it comes back by itself when the path returns', async () => {
    await cutAndRecover(net, port, call, [base()], serverId);
  });
});

describe('three consoles behind one address, PostgreSQL and Redis (root, netns, nftables)', {
  ...suite,
  ...(!suite.skip && !(pgUrl && redisUrl) ? { skip: 'no PostgreSQL and Redis' } : {}),
}, () => {
  const dir = tempDir('palisade-link-netns3-');
  const net = firewalledNamespace(2);
  const consoles: ConsoleProcess[] = [];
  const ports: number[] = [];
  let balancer: Awaited<ReturnType<typeof tcpBalancer>> | undefined;
  let agent: Awaited<ReturnType<typeof startFirewalledAgent>> | undefined;
  let call: ConsoleCall;
  let serverId = 0;

  const cleanup = () => {
    const child = agent?.daemon.child;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    net.remove();
  };
  process.on('exit', cleanup);

  before(async () => {
    net.create();
    // The balancer's address is the console's public one, so it is known before the consoles start.
    balancer = await tcpBalancer(ports, '0.0.0.0');
    const env = {
      ...consoleEnv,
      PALISADE_DATA_DIR: dir.path,
      PALISADE_DATABASE_URL: pgUrl!,
      PALISADE_DATABASE_SCHEMA: `link_netns_${process.pid}`,
      PALISADE_REDIS_URL: redisUrl!,
      PALISADE_REDIS_PREFIX: `palisade-link-netns-${process.pid}-${Date.now()}`,
      PALISADE_PUBLIC_URL: `http://${net.hostIp}:${balancer.port}`,
    };
    for (let i = 0; i < 3; i += 1) consoles.push(await startConsoleProcess(env));
    ports.push(...consoles.map((c) => Number(new URL(c.url).port)));
    agent = await startFirewalledAgent(net, dir.path);
    const account = await accountWithProduct(consoles[0]!.url, `netns-link3-${process.pid}@example.com`);
    call = account.call;
    serverId = await registerByToken(net, agent, {
      call,
      base: consoles[0]!.url,
      consoleUrl: `http://${net.hostIp}:${balancer.port}`,
      productId: account.productId,
    });
  });

  after(async () => {
    await agent?.daemon.stop();
    await balancer?.close();
    for (const c of consoles) await c.kill();
    cleanup();
    dir.remove();
  });

  test('each of the three reaches the agent over the one link, two of them relaying to its holder', async () => {
    await onlineThroughLink(call, consoles[0]!.url, serverId);
    const sinces = await Promise.all(
      consoles.map(async (c) => (await call(c.url, 'GET', `/api/servers/${serverId}`)).body.data.server.connection),
    );
    assert.equal(sinces.filter((c) => c.since !== null).length, 1, `one holder: ${JSON.stringify(sinces)}`);
    for (const [i, c] of consoles.entries()) await metricsAndBlacklist(call, c.url, serverId, `192.0.2.${10 + i}`);
  });

  test('cutting the link gives 502 on all three; it comes back by itself', async () => {
    await cutAndRecover(
      net,
      balancer!.port,
      call,
      consoles.map((c) => c.url),
      serverId,
    );
  });
});
