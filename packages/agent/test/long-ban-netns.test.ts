// A long ban must never break the firewall, against real nftables in network
// namespaces made for the test: nftables (1.0.6) refuses element timeouts above 99,999,999 s, and
// one refused element used to fail every later firewall update and, after a restart, the start.
// The control API refuses a ttl_s above MAX_TTL_S; a state file holding a ten-year ban (as an
// older agent wrote it) still starts and blocks every entry; and an element nftables refuses is
// left out of its set, named in last_error, while the rest of the set is applied.
import assert from 'node:assert/strict';
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MAX_TTL_S, NFT_MAX_TIMEOUT_S } from '@palisade/protocol/control-schemas/standalone';
import { rootSuite, runToEnd } from '@palisade/testkit';
import { parseNetwork } from '../src/lib/net.js';
import { elementOf, nftablesFirewall, nftRunner, type WantedState } from '../src/protection/firewall.js';
import { AGENT_COMMAND, eventually, keyFrom, runCli, tempDir, writeConfig } from './agent-process.js';

const HELPER = fileURLToPath(new URL('./netns-helper.js', import.meta.url));
const tag = (process.pid % 100000).toString(36);
const NS_AGENT = `plt-${tag}`;
const NS_CLIENT = `plu-${tag}`;
const NS_FIREWALL = `plf-${tag}`;
const AGENT_IP = '10.79.0.1';
const OLD_BAN = '10.79.0.2'; // banned for ten years by an older agent
const BANNED = '10.79.0.3'; // banned without an expiry beside it
const FRIEND = '10.79.0.4'; // the test's own client
const PORT = 9741;
const TEN_YEARS_S = 10 * 365 * 86400;

const suite = rootSuite('netns long bans', ['ip', 'nft'], '.ci/run installs nftables and iproute2');

const sh = (cmd: string, args: string[]) => execFileSync(cmd, args, { encoding: 'utf8' });
const inNs = (ns: string, cmd: string[]) => sh('ip', ['netns', 'exec', ns, ...cmd]);

async function helper(args: string[]): Promise<{ [k: string]: unknown }> {
  const { out } = await runToEnd('ip', ['netns', 'exec', NS_CLIENT, process.execPath, HELPER, ...args]);
  try {
    return JSON.parse(out.trim().split('\n')[0]!);
  } catch {
    throw new Error(`helper ${args[0]} printed: ${out}`);
  }
}

describe('long bans against real nftables (root, network namespaces)', suite, () => {
  const dir = tempDir('palisade-longban-');
  let agent: ChildProcess | null = null;
  let agentOut = '';
  let exited: number | null = null;
  let key = '';
  const url = `http://${AGENT_IP}:${PORT}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const r = await helper([
      'request',
      `${url}/${path}`,
      key,
      method,
      FRIEND,
      ...(body === undefined ? [] : [JSON.stringify(body)]),
    ]);
    // biome-ignore lint/suspicious/noExplicitAny: tests read answer fields directly
    return r as { status: number; json: any; error?: string };
  };
  const removeNamespaces = () => {
    for (const ns of [NS_AGENT, NS_CLIENT, NS_FIREWALL]) spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  };
  const cleanup = () => {
    if (agent && agent.exitCode === null && agent.signalCode === null) agent.kill('SIGKILL');
    removeNamespaces();
    dir.remove();
  };
  process.on('exit', cleanup);

  before(async () => {
    removeNamespaces();
    for (const ns of [NS_AGENT, NS_CLIENT, NS_FIREWALL]) sh('ip', ['netns', 'add', ns]);
    sh('ip', [
      'link',
      'add',
      `lv-a-${tag}`,
      'netns',
      NS_AGENT,
      'type',
      'veth',
      'peer',
      'name',
      `lv-c-${tag}`,
      'netns',
      NS_CLIENT,
    ]);
    for (const ns of [NS_AGENT, NS_CLIENT, NS_FIREWALL]) inNs(ns, ['ip', 'link', 'set', 'lo', 'up']);
    inNs(NS_AGENT, ['ip', 'addr', 'add', `${AGENT_IP}/24`, 'dev', `lv-a-${tag}`]);
    for (const ip of [OLD_BAN, BANNED, FRIEND])
      inNs(NS_CLIENT, ['ip', 'addr', 'add', `${ip}/24`, 'dev', `lv-c-${tag}`]);
    inNs(NS_AGENT, ['ip', 'link', 'set', `lv-a-${tag}`, 'up']);
    inNs(NS_CLIENT, ['ip', 'link', 'set', `lv-c-${tag}`, 'up']);

    const configFile = join(dir.path, 'agent.conf');
    const stateDir = join(dir.path, 'state');
    writeConfig(configFile, {
      'metrics.listen': `${AGENT_IP}:${PORT}`,
      'protection.backend': 'nftables',
      'protection.reconcile_s': '1',
    });
    const made = await runCli(['key', '--state-dir', stateDir, '--config', configFile]);
    key = keyFrom(made.stdout) ?? '';
    assert.ok(key, made.out);
    // The blacklist as an agent before this fix wrote it: a ten-year ban beside an ordinary one.
    const now = Date.now();
    mkdirSync(join(stateDir, 'protection'), { recursive: true, mode: 0o700 });
    writeFileSync(
      join(stateDir, 'protection', 'blacklist.json'),
      JSON.stringify({
        entries: [
          {
            ip: OLD_BAN,
            note: 'ten years',
            ttl_s: TEN_YEARS_S,
            expires_at: now + TEN_YEARS_S * 1000,
            source: 'manual',
            added_at: now,
          },
          { ip: BANNED, note: 'for good', source: 'manual', added_at: now },
        ],
      }),
      { mode: 0o600 },
    );
    agent = spawn(
      'ip',
      ['netns', 'exec', NS_AGENT, ...AGENT_COMMAND, 'run', '--config', configFile, '--state-dir', stateDir],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    agent.stdout!.on('data', (d) => {
      agentOut += d;
    });
    agent.stderr!.on('data', (d) => {
      agentOut += d;
    });
    agent.on('exit', (code) => {
      exited = code;
    });
    await eventually(
      'the agent to listen',
      () => {
        if (exited !== null) throw new Error(`the agent exited ${exited}:\n${agentOut}`);
        return agentOut.includes('listening on') ? true : undefined;
      },
      20_000,
    );
  });

  after(cleanup);

  test('a state file holding a ten-year ban still starts, and every entry blocks', async () => {
    const set = await eventually('both bans in nft', () => {
      const s = inNs(NS_AGENT, ['nft', 'list', 'set', 'inet', 'palisade', 'manual_v4']);
      return s.includes(OLD_BAN) && s.includes(BANNED) ? s : undefined;
    });
    const timeout = /10\.79\.0\.2 timeout (\d+)d/.exec(set);
    assert.ok(timeout, set);
    assert.ok(Number(timeout[1]) <= MAX_TTL_S / 86400, `the old ban was shortened to at most 3 years: ${set}`);
    assert.match(agentOut, /shortened to 94608000 s/, 'the agent said it shortened the entry');
    for (const ip of [OLD_BAN, BANNED]) {
      const probe = await helper(['probe', AGENT_IP, String(PORT), ip, '1500']);
      assert.equal(probe.ok, false, `${ip} cannot connect`);
    }
    const black = await call('GET', 'blacklist');
    // biome-ignore lint/suspicious/noExplicitAny: answer fields
    const old = black.json.entries.find((e: any) => e.ip === OLD_BAN);
    assert.equal(old.ttl_s, MAX_TTL_S);
  });

  test('a ttl_s above what nftables takes is a 400 naming ttl_s, and later bans still block', async () => {
    const r = await call('POST', 'blacklist', { ip: '10.79.0.9', ttl_s: TEN_YEARS_S });
    assert.equal(r.status, 400, JSON.stringify(r));
    assert.match(r.json.error, /^ttl_s: expected a whole number from 1 to 94608000/);
    const imported = await call('POST', 'blacklist', [{ ip: '10.79.0.9', ttl_s: TEN_YEARS_S }]);
    assert.equal(imported.json.added, 0, JSON.stringify(imported));
    assert.equal(imported.json.invalid, 1);
    const pattern = await call('POST', 'block-pattern', {
      name: 'too-long',
      file: '/var/log/none.log',
      regex: 'x (?<ip>\\S+)',
      threshold: 1,
      window_s: 60,
      ban_s: TEN_YEARS_S,
    });
    assert.equal(pattern.status, 400, JSON.stringify(pattern));
    assert.match(pattern.json.error, /^ban_s:/);
    const longest = await call('POST', 'blacklist', { ip: '10.79.0.10', ttl_s: MAX_TTL_S });
    assert.equal(longest.status, 200, JSON.stringify(longest));
    const later = await call('POST', 'blacklist', { ip: '10.79.0.11', ttl_s: 600 });
    assert.equal(later.status, 200);
    await eventually('the later bans in nft', () => {
      const s = inNs(NS_AGENT, ['nft', 'list', 'set', 'inet', 'palisade', 'manual_v4']);
      return s.includes('10.79.0.10') && s.includes('10.79.0.11') ? true : undefined;
    });
    const m = await call('GET', 'metrics');
    assert.equal(m.json.protection.drift.last_error, null, JSON.stringify(m.json.protection.drift));
    assert.equal(m.json.protection.last_apply_error, null);
  });

  test('an element nftables refuses is left out and named; the rest of its set is applied', async () => {
    const logs: string[] = [];
    const now = Date.now();
    const fw = nftablesFirewall({
      run: nftRunner(['ip', 'netns', 'exec', NS_FIREWALL]),
      clock: () => now,
      log: (m) => logs.push(m),
    });
    const el = (ip: string, ttlS?: number) =>
      elementOf(parseNetwork(ip), ttlS === undefined ? undefined : now + ttlS * 1000);
    const wanted: WantedState = {
      geoMode: 'off',
      sets: {
        allow: [],
        manual: [el('192.0.2.1'), el('192.0.2.2', NFT_MAX_TIMEOUT_S + 1000), el('192.0.2.3', 600), el('2001:db8::1')],
        attack: [el('198.51.100.7', 300)],
        feed: [],
        geo: [],
      },
    };
    await fw.apply(wanted, 'all');
    const manual = inNs(NS_FIREWALL, ['nft', 'list', 'set', 'inet', 'palisade', 'manual_v4']);
    assert.match(manual, /192\.0\.2\.1/);
    assert.match(manual, /192\.0\.2\.3/);
    assert.doesNotMatch(manual, /192\.0\.2\.2/);
    assert.match(inNs(NS_FIREWALL, ['nft', 'list', 'set', 'inet', 'palisade', 'manual_v6']), /2001:db8::1/);
    assert.match(inNs(NS_FIREWALL, ['nft', 'list', 'set', 'inet', 'palisade', 'attack_v4']), /198\.51\.100\.7/);
    assert.match(
      fw.drift().last_error ?? '',
      /refused 1 element.*manual_v4 192\.0\.2\.2 timeout \d+s \(value too large\)/,
    );
    // A later update of the set (a new ban) still goes in, and a reconcile does not call the refused one drift.
    wanted.sets.manual = [...wanted.sets.manual, el('192.0.2.4', 60)];
    await fw.apply(wanted, ['manual']);
    assert.match(inNs(NS_FIREWALL, ['nft', 'list', 'set', 'inet', 'palisade', 'manual_v4']), /192\.0\.2\.4/);
    await fw.reconcile(wanted);
    assert.equal(fw.drift().repairs, 0, JSON.stringify(fw.drift()));
    assert.match(fw.drift().last_error ?? '', /192\.0\.2\.2/);
    await fw.remove();
  });
});
