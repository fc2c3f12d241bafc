// A propagated ban drops packets : a first server (a monitor-mode agent on
// this host) bans an address for a block pattern line; the console propagates it under a fleet
// policy to a second server, a real agent with nftables in its own network namespace, whose
// firewall then drops the attacker's connections from a third namespace.
// Needs root, `ip` and `nft`: in CI their absence fails the suite; locally it is skipped with the reason.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rootSuite, runToEnd, spawnCaptured } from '@palisade/testkit';
import { agentNetwork } from './support/netns.js';
import {
  AGENT_CLI,
  type AgentProcess,
  agentKey,
  type ConsoleProcess,
  eventually,
  signUp,
  startAgent,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const HELPER = fileURLToPath(new URL('../../packages/agent/dist/test/netns-helper.js', import.meta.url));
/** Host ↔ second server (the console's network), and second server ↔ attacker. */
const network = agentNetwork('pf', 87, 88);
const { agentNs: NS_AGENT, hostIp: HOST_IP, agentIp: AGENT_IP, agentEdgeIp: AGENT_EDGE_IP } = network;
const { outsideNs: NS_ATTACKER, outsideIp: ATTACKER } = network;
const PORT = 9743;

const suite = rootSuite('fleet ban in nftables', ['ip', 'nft'], '.ci/run installs nftables and iproute2');

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });

/** Can the attacker open a connection to the second server's port? */
async function attackerConnects(): Promise<boolean> {
  const { out } = await runToEnd('ip', [
    'netns',
    'exec',
    NS_ATTACKER,
    process.execPath,
    HELPER,
    'probe',
    AGENT_EDGE_IP,
    String(PORT),
    ATTACKER,
    '1500',
  ]);
  return (JSON.parse(out.trim().split('\n')[0]!) as { ok: boolean }).ok;
}

describe('a ban propagated by the console drops the attacker on the second server (root, nftables)', suite, () => {
  const dir = tempDir('palisade-fleet-netns-');
  const logFile = join(dir.path, 'app.log');
  let consoleProc: ConsoleProcess | null = null;
  let first: AgentProcess | null = null;
  let second: ReturnType<typeof spawnCaptured> | null = null;
  let cookie = '';
  const ids: number[] = [];

  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(`${consoleProc!.url}${path}`, {
      method,
      headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: answers are checked field by field
    return { status: res.status, body: text ? (JSON.parse(text) as any) : null, text };
  }

  const removeNamespaces = network.remove;
  process.on('exit', removeNamespaces);

  before(async () => {
    network.create();

    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, 'console'),
      PALISADE_HOST: HOST_IP,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
    });
    cookie = await signUp(consoleProc.url, {
      email: `fleet-netns-${process.pid}@example.com`,
      password: 'fleet-password',
      name: 'ops',
    });

    // The second server: nftables, in its namespace, reached by the console over the veth pair.
    const configFile = join(dir.path, 'second.conf');
    const stateDir = join(dir.path, 'second-state');
    writeFileSync(
      configFile,
      [
        `metrics.listen = 0.0.0.0:${PORT}`,
        'checkin.interval_s = 5',
        'protection.backend = nftables',
        'protection.reconcile_s = 1',
        '',
      ].join('\n'),
    );
    const key = agentKey(stateDir, configFile);
    second = spawnCaptured('ip', [
      'netns',
      'exec',
      NS_AGENT,
      process.execPath,
      AGENT_CLI,
      'run',
      '--config',
      configFile,
      '--state-dir',
      stateDir,
    ]);
    assert.ok(await second.waitFor(/listening on/), `the second agent did not start:\n${second.output()}`);
    // The first server: monitor mode, on this host.
    first = await startAgent();

    const product = (await call('POST', '/api/products', { catalog_id: 1 })).body.data.product;
    for (const [name, apiUrl, apiKey] of [
      ['first', first.url, first.key],
      ['second', `http://${AGENT_IP}:${PORT}`, key],
    ]) {
      const added = await call('POST', '/api/servers', {
        product_id: product.id,
        name,
        api_url: apiUrl,
        api_key: apiKey,
      });
      assert.equal(added.status, 201, added.text);
      ids.push(added.body.data.server.id);
    }
  });

  after(async () => {
    await first?.stop();
    await second?.stop();
    await consoleProc?.kill();
    removeNamespaces();
    dir.remove();
  });

  test('the attacker connects before the ban and not after it reaches the second server', async () => {
    assert.equal(await attackerConnects(), true, 'nothing blocks the attacker yet');
    // The namespaces' addresses are private (10.x), which a policy propagates only when it opts in
    // (docs/protection.md, "What a fleet may hold").
    const policy = await call('POST', '/api/fleet/policies', {
      name: 'everywhere',
      trigger: 'pattern',
      scope: 'all',
      allow_private: true,
    });
    assert.equal(policy.status, 201, policy.text);
    writeFileSync(logFile, '');
    const pattern = await call('POST', `/api/servers/${ids[0]}/control?path=block-pattern`, {
      name: 'app-login',
      file: logFile,
      regex: 'login failed for (?<ip>\\S+)',
      threshold: 1,
      window_s: 60,
      ban_s: 600,
    });
    assert.equal(pattern.status, 200, pattern.text);
    appendFileSync(logFile, `login failed for ${ATTACKER}\n`);

    await eventually(
      'the second server holds the propagated ban',
      async () => {
        const res = await call('GET', `/api/servers/${ids[1]}/control?path=blacklist&ip=${ATTACKER}`);
        return res.body?.verdict === 'drop' ? res.body : undefined;
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(
        `${err.message}\nconsole:\n${consoleProc!.output().slice(-3000)}\nsecond:\n${second!.output().slice(-3000)}`,
      );
    });
    await eventually(
      "the second server's firewall drops the attacker",
      async () => ((await attackerConnects()) ? undefined : true),
      30_000,
    );
    const table = sh('ip', ['netns', 'exec', NS_AGENT, 'nft', 'list', 'ruleset']);
    assert.ok(table.includes(ATTACKER), `the address is in the second server's nftables sets:\n${table}`);
  });
});
