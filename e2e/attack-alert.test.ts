// A real attack reaching the console's alert channels : a real agent in a
// network namespace, with no alerter setting in its config, registered with a real console; an
// `attack` rule on the account's signed webhook, pointing at a real local receiver; a connection
// flood from another namespace. The receiver gets one "under attack" notification, and one "ended"
// when the attack is over: the attack travels in the agent's check-ins (docs/alerts.md, "Rules").
// Needs root, `ip` and `nft`: in CI their absence fails the suite; locally it is skipped with the reason.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { rootSuite, signatureValid, spawnCaptured, startReceiver } from '@palisade/testkit';
import { agentNetwork } from './support/netns.js';
import {
  AGENT_CLI,
  agentKey,
  type ConsoleProcess,
  eventually,
  startConsoleProcess,
  tempDir,
} from './support/processes.js';

const HELPER = fileURLToPath(new URL('../../packages/agent/dist/test/netns-helper.js', import.meta.url));
/** Host ↔ agent (the console's network) and agent ↔ flooder (the attacker's). */
const network = agentNetwork('pa', 83, 84);
const { agentNs: NS_AGENT, hostIp: HOST_IP, agentIp: AGENT_IP, agentEdgeIp: AGENT_EDGE_IP } = network;
const { outsideNs: NS_FLOOD, outsideIp: FLOODER } = network;
const PORT = 9741;

const suite = rootSuite('attack alert', ['ip', 'nft'], '.ci/run installs nftables and iproute2');

interface Alert {
  kind: string;
  title: string;
  server: string;
  rule: string;
}

describe('an attack on a real agent reaches the alert channels (root, nftables)', suite, () => {
  const dir = tempDir('palisade-attack-alert-');
  let consoleProc: ConsoleProcess | null = null;
  let agent: ReturnType<typeof spawnCaptured> | null = null;
  let flooder: ChildProcess | null = null;
  let receiver: Awaited<ReturnType<typeof startReceiver>> | null = null;
  let cookie = '';
  let key = '';
  let flooderOut = '';

  async function call(method: string, path: string, body?: unknown) {
    const res = await fetch(`${consoleProc!.url}${path}`, {
      method,
      headers: { cookie, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: test answers are checked field by field
    return { status: res.status, body: text ? (JSON.parse(text) as any) : null, text };
  }

  const removeNamespaces = network.remove;
  const killAll = () => {
    if (flooder && flooder.exitCode === null && flooder.signalCode === null) flooder.kill('SIGKILL');
  };
  process.on('exit', () => {
    killAll();
    removeNamespaces();
  });

  before(async () => {
    // The agent's namespace reaches the console through one veth pair (as over a network), and is
    // reached by the flooder's namespace through another.
    network.create();

    consoleProc = await startConsoleProcess({
      PALISADE_DATA_DIR: join(dir.path, 'console'),
      PALISADE_HOST: HOST_IP,
      PALISADE_ALLOW_PRIVATE_TARGETS: '1',
      PALISADE_BOOTSTRAP_ADMIN: '0',
      PALISADE_CHECKIN_INTERVAL_S: '5',
      PALISADE_ALERT_INTERVAL_S: '1',
    });
    const signUp = await fetch(`${consoleProc.url}/api/auth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: `attack-${process.pid}@example.com`, password: 'attack-password', name: 'ops' }),
    });
    assert.equal(signUp.status, 201);
    cookie = signUp.headers.get('set-cookie')!.split(';')[0]!;

    // The agent's config: where it listens, the check-in interval and protection. No alerter.
    const configFile = join(dir.path, 'agent.conf');
    const stateDir = join(dir.path, 'agent-state');
    const lines = {
      'metrics.listen': `0.0.0.0:${PORT}`,
      'checkin.interval_s': '5',
      'protection.backend': 'nftables',
      'protection.conn_limit': '40',
      'protection.check_interval_ms': '500',
      'protection.reconcile_s': '1',
      // Longer than the check-in interval (the console's minimum, 5 s), so the attack is in progress
      // at a check-in: the check-in carries the attacks in progress at that moment.
      'protection.attack_end_s': '12',
      'protection.ban_s': '300',
    };
    writeFileSync(
      configFile,
      `${Object.entries(lines)
        .map(([k, v]) => `${k} = ${v}`)
        .join('\n')}\n`,
    );
    key = agentKey(stateDir, configFile);
    assert.doesNotMatch(readFileSync(configFile, 'utf8'), /alerter/, 'the agent has no alerter setting');
    agent = spawnCaptured('ip', [
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
    assert.ok(await agent.waitFor(/listening on/), `the agent did not start:\n${agent.output()}`);

    receiver = await startReceiver('ok');
    const product = (await call('POST', '/api/products', { catalog_id: 1 })).body.data.product;
    const added = await call('POST', '/api/servers', {
      product_id: product.id,
      name: 'edge-attacked',
      api_url: `http://${AGENT_IP}:${PORT}`,
      api_key: key,
    });
    assert.equal(added.status, 201, added.text);
    assert.equal(added.body.data.server.enrolled, true);
  });

  after(async () => {
    killAll();
    await agent?.stop();
    await consoleProc?.kill();
    await receiver?.close();
    removeNamespaces();
    dir.remove();
  });

  test('one "under attack" notification when a flood starts, one "ended" when it is over', async () => {
    const hook = await call('PUT', '/api/account/webhook', { url: receiver!.url });
    assert.equal(hook.status, 200, hook.text);
    const secret = hook.body.data.secret as string;
    const channel = await call('POST', '/api/alerts/channels', { name: 'signed webhook', kind: 'webhook' });
    assert.equal(channel.status, 201, channel.text);
    const rule = await call('POST', '/api/alerts/rules', {
      name: 'attack',
      kind: 'attack',
      channel_ids: [channel.body.data.channel.id],
    });
    assert.equal(rule.status, 201, rule.text);
    // The agent checks in (with no attack in progress) before the flood.
    await eventually('a check-in without an attack', async () => {
      const servers = (await call('GET', '/api/servers')).body.data.servers;
      return servers[0]?.attacks_active === 0 ? true : undefined;
    });

    flooder = spawn(
      'ip',
      [
        'netns',
        'exec',
        NS_FLOOD,
        process.execPath,
        HELPER,
        'flood',
        AGENT_EDGE_IP,
        String(PORT),
        FLOODER,
        '120',
        '60000',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    flooder.stdout!.on('data', (d) => {
      flooderOut += d;
    });
    flooder.stderr!.on('data', (d) => {
      flooderOut += d;
    });
    // The attack reaches the console in the agent's check-ins.
    await eventually(
      'the console to see the attack',
      async () => {
        const servers = (await call('GET', '/api/servers')).body.data.servers;
        return servers[0]?.attacks_active > 0 ? true : undefined;
      },
      60_000,
    ).catch(async (err) => {
      const attacks = await fetch(`http://${AGENT_IP}:${PORT}/attacks`, { headers: { authorization: `Bearer ${key}` } })
        .then((r) => r.text())
        .catch((e) => String(e));
      throw new Error(
        `${err.message}\nagent attacks: ${attacks}\nflooder: ${flooderOut}\nagent:\n${agent!.output().slice(-3000)}`,
      );
    });
    const alerts = () => receiver!.deliveries.map((d) => JSON.parse(d.body) as Alert);
    await eventually('the "under attack" notification', () => (alerts().length > 0 ? true : undefined), 60_000).catch(
      async (err) => {
        throw new Error(
          `${err.message}\nhistory: ${(await call('GET', '/api/alerts/history')).text}\nconsole:\n${consoleProc!.output().slice(-3000)}`,
        );
      },
    );
    const [fired] = alerts();
    assert.equal(fired!.kind, 'alert.fired');
    assert.equal(fired!.title, 'edge-attacked is under attack');
    assert.equal(fired!.rule, 'attack');
    const delivery = receiver!.deliveries[0]!;
    assert.ok(signatureValid(delivery.headers['x-palisade-signature'], delivery.body, secret), 'signed');

    // The flood stops (its source is banned meanwhile); the agent ends the attack, the console tells.
    killAll();
    await eventually('the "ended" notification', () => (alerts().length > 1 ? true : undefined), 60_000);
    // Two more check-ins (and the alert rounds after them) bring nothing more.
    const seen = async () => (await call('GET', '/api/servers')).body.data.servers[0].last_seen as number;
    const first = await seen();
    const later = await eventually('another check-in', async () => ((await seen()) > first ? seen() : undefined));
    await eventually('and one more', async () => ((await seen()) > later ? true : undefined));
    const history = await eventually('both recorded as delivered', async () => {
      const rows = (await call('GET', '/api/alerts/history')).body.data.history as { kind: string; status: string }[];
      return rows.length >= 2 && rows.every((h) => h.status === 'delivered') ? rows : undefined;
    });
    assert.deepEqual(
      alerts().map((a) => [a.kind, a.title]),
      [
        ['alert.fired', 'edge-attacked is under attack'],
        ['alert.resolved', 'The attack on edge-attacked ended'],
      ],
    );
    assert.deepEqual(
      history.map((h) => h.kind),
      ['alert.resolved', 'alert.fired'],
    );
  });
});
