// An agent behind a firewall, for real: the agent runs in a network namespace of its own whose
// nftables drop every connection to the agent's port, so the console (in the host namespace)
// cannot reach it, yet the agent reaches the console. With `console.connect = outbound` the fleet
// path works through the link; cutting the link gives 502, and it comes back by itself. In CI a
// missing `ip`, `nft` or root fails the suite; locally it is skipped with the reason.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { rootSuite, spawnCaptured } from '@palisade/testkit';
import {
  AGENT_CLI,
  accountWithProduct,
  agentKey,
  type ConsoleCall,
  type ConsoleProcess,
  eventually,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const tag = (process.pid % 100000).toString(36);
const NS = `pll-${tag}`;
const HOST_IP = '10.79.0.1';
const AGENT_IP = '10.79.0.2';
const AGENT_PORT = 9740;

const suite = rootSuite('netns link', ['ip', 'nft'], '.ci/run installs nftables and iproute2');

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
const inNs = (cmd: string[]) => sh('ip', ['netns', 'exec', NS, ...cmd]);
const nft = (script: string) => execFileSync('ip', ['netns', 'exec', NS, 'nft', '-f', '-'], { input: script });

describe('the outbound link through a firewall (root, netns, nftables)', suite, () => {
  const dir = tempDir('palisade-link-netns-');
  let port = 0;
  let consoleProc: ConsoleProcess | undefined;
  let agent: ReturnType<typeof spawnCaptured> | undefined;
  let key = '';
  let session: ConsoleCall;
  let serverId = 0;
  const base = () => `http://127.0.0.1:${port}`;
  const call = (method: string, path: string, body?: unknown) => session(base(), method, path, body);
  const connection = async () => (await call('GET', `/api/servers/${serverId}`)).body.data.server.connection;

  const cleanup = () => {
    if (agent && agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
    spawnSync('ip', ['netns', 'del', NS], { stdio: 'ignore' });
  };
  process.on('exit', cleanup);

  before(async () => {
    cleanup();
    sh('ip', ['netns', 'add', NS]);
    sh('ip', ['link', 'add', `lh-${tag}`, 'type', 'veth', 'peer', 'name', `la-${tag}`, 'netns', NS]);
    sh('ip', ['addr', 'add', `${HOST_IP}/24`, 'dev', `lh-${tag}`]);
    sh('ip', ['link', 'set', `lh-${tag}`, 'up']);
    inNs(['ip', 'link', 'set', 'lo', 'up']);
    inNs(['ip', 'addr', 'add', `${AGENT_IP}/24`, 'dev', `la-${tag}`]);
    inNs(['ip', 'link', 'set', `la-${tag}`, 'up']);

    const probe = createServer();
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    port = (probe.address() as { port: number }).port;
    await new Promise((resolve) => probe.close(resolve));
    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, 'console'),
      PALISADE_HOST: '0.0.0.0',
      PALISADE_PORT: String(port),
      PALISADE_PUBLIC_URL: `http://${HOST_IP}:${port}`,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
      PALISADE_AGENT_TIMEOUT_MS: '2000',
    });

    const configFile = join(dir.path, 'agent.conf');
    const stateDir = join(dir.path, 'state');
    writeFileSync(
      configFile,
      `metrics.listen = ${AGENT_IP}:${AGENT_PORT}\nconsole.connect = outbound\ncheckin.interval_s = 5\nprotection.backend = monitor\n`,
    );
    key = agentKey(stateDir, configFile);
    agent = spawnCaptured('ip', [
      'netns',
      'exec',
      NS,
      process.execPath,
      AGENT_CLI,
      'run',
      '--config',
      configFile,
      '--state-dir',
      stateDir,
    ]);
    assert.ok(await agent.waitFor(/listening on (https?:\/\/\S+)/), agent.output());

    const account = await accountWithProduct(base(), `netns-link-${process.pid}@example.com`);
    session = account.call;
    // Added while the agent's port is still open (the console checks /health and enrols it) ...
    const added = await call('POST', '/api/servers', {
      product_id: account.productId,
      name: 'firewalled',
      api_url: `http://${AGENT_IP}:${AGENT_PORT}`,
      api_key: key,
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    serverId = added.body.data.server.id;
    // ... then nothing may reach the agent's port from outside its namespace.
    nft(`table inet palisade_link_test {
  chain input { type filter hook input priority -10; policy accept; tcp dport ${AGENT_PORT} drop; }
}
`);
  });

  after(async () => {
    await agent?.stop();
    await consoleProc?.kill();
    cleanup();
    dir.remove();
  });

  test('the console cannot reach the agent, yet metrics and a blacklist write work over the link', async () => {
    const direct = await call('POST', '/api/servers/test', {
      api_url: `http://${AGENT_IP}:${AGENT_PORT}`,
      api_key: key,
    });
    assert.equal(direct.body.data.reachable, false, 'the direct path is dropped');

    await eventually('the link up', async () => ((await connection()).link === 'up' ? true : undefined));
    const metrics = await call('GET', `/api/servers/${serverId}/metrics`);
    assert.equal(metrics.status, 200, JSON.stringify(metrics.body));
    assert.equal(typeof metrics.body.cpu.pct, 'number');

    const added = await call('POST', `/api/servers/${serverId}/control?path=blacklist`, { ip: '198.51.100.23' });
    assert.ok(added.status >= 200 && added.status < 300, JSON.stringify(added.body));
    const lookup = await call('GET', `/api/servers/${serverId}/control?path=blacklist&ip=198.51.100.23`);
    assert.equal(lookup.status, 200, JSON.stringify(lookup.body));
    assert.equal(lookup.body.decided_by, 'blacklist');
    const detail = await call('GET', `/api/servers/${serverId}`);
    assert.equal(detail.body.data.server.state, 'online');
  });

  test('cutting the link gives 502; it comes back by itself when the path returns', async () => {
    // The agent's packets to the console vanish: no FIN, no reset, only silence.
    nft(`table inet palisade_link_cut {
  chain output { type filter hook output priority -10; policy accept; ip daddr ${HOST_IP} tcp dport ${port} drop; }
}
`);
    const failed = await call('GET', `/api/servers/${serverId}/metrics`);
    assert.equal(failed.status, 502);
    assert.equal(failed.body.error, 'agent unreachable');
    // Heartbeats every 10 s, dead after 25 s of silence (packages/protocol/src/link.ts).
    await eventually(
      'the console notices the dead link',
      async () => ((await connection()).link === 'down' ? true : undefined),
      60_000,
    );

    inNs(['nft', 'delete', 'table', 'inet', 'palisade_link_cut']);
    const back = await eventually(
      'metrics through the new link',
      async () => {
        const res = await call('GET', `/api/servers/${serverId}/metrics`);
        return res.status === 200 ? res : undefined;
      },
      90_000,
    );
    assert.equal(typeof back.body.cpu.pct, 'number');
  });
});
