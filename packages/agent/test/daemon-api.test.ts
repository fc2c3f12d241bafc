// The metrics API of a real daemon process on loopback: every auth case, the snapshot's shape,
// the Prometheus text, TLS with the printed fingerprint, and enrolment.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { generateToken, hashToken } from '@palisade/protocol';
import { type AgentProcess, closedPort, eventually, keyFrom, request, runCli, startAgent } from './agent-process.js';

describe('metrics API auth', () => {
  let agent: AgentProcess;
  before(async () => {
    agent = await startAgent({ 'checkin.interval_s': '1' });
  });
  after(() => agent.stop());

  test('no key: 401 with an error body', async () => {
    for (const path of ['/health', '/metrics', '/metrics/prometheus', '/nowhere']) {
      const res = await request(`${agent.url}${path}`);
      assert.equal(res.status, 401, path);
      assert.match(res.json.error, /missing agent key/);
    }
    const basic = await request(`${agent.url}/health`, { headers: { authorization: 'Basic abc' } });
    assert.equal(basic.status, 401);
  });

  test('wrong key: 401, whether well-formed or not', async () => {
    for (const key of [generateToken('agentKey'), 'agk_nope', agent.key.slice(0, -1), `${agent.key}x`]) {
      const res = await request(`${agent.url}/health`, { key });
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { error: 'invalid agent key' });
    }
  });

  test('valid key: /health answers status, version and uptime', async () => {
    const res = await request(`${agent.url}/health`, { key: agent.key });
    assert.equal(res.status, 200);
    assert.equal(res.json.status, 'ok');
    assert.equal(res.json.version, '0.1.0');
    assert.ok(Number.isInteger(res.json.uptime_s) && res.json.uptime_s >= 0);
    assert.deepEqual(Object.keys(res.json).sort(), ['status', 'uptime_s', 'version']);
  });

  test('unknown route with a valid key: 404', async () => {
    const res = await request(`${agent.url}/nowhere`, { key: agent.key });
    assert.equal(res.status, 404);
    assert.match(res.json.error, /no route/);
    const wrongMethod = await request(`${agent.url}/metrics`, { key: agent.key, method: 'DELETE' });
    assert.equal(wrongMethod.status, 405);
  });

  test('the state dir holds only the hash of the key', () => {
    const stored = readFileSync(join(agent.stateDir, 'agent-key.json'), 'utf8');
    assert.ok(!stored.includes(agent.key));
    assert.equal(JSON.parse(stored).sha256, hashToken(agent.key));
    assert.equal(statSync(join(agent.stateDir, 'agent-key.json')).mode & 0o777, 0o600);
  });

  test('/metrics has every field of the contract, from memory', async () => {
    const res = await request(`${agent.url}/metrics`, { key: agent.key });
    assert.equal(res.status, 200);
    const m = res.json;
    assert.ok(Number.isInteger(m.ts) && m.ts > 1.6e12);
    assert.deepEqual(Object.keys(m.agent).sort(), ['uptime_s', 'version']);
    for (const k of ['hostname', 'os', 'kernel', 'arch', 'cores', 'public_ip']) assert.ok(k in m.host, k);
    assert.equal(typeof m.host.hostname, 'string');
    assert.ok(m.host.cores >= 1);
    for (const k of ['pct', 'load1', 'load5', 'load15']) assert.equal(typeof m.cpu[k], 'number', `cpu.${k}`);
    for (const k of ['total_mb', 'used_mb', 'pct', 'swap_total_mb', 'swap_used_mb']) {
      assert.equal(typeof m.memory[k], 'number', `memory.${k}`);
    }
    assert.ok(m.memory.total_mb > 0);
    assert.ok(Array.isArray(m.disks) && m.disks.length >= 1);
    for (const d of m.disks) assert.deepEqual(Object.keys(d).sort(), ['fs', 'mount', 'pct', 'total_mb', 'used_mb']);
    for (const k of ['rx_bps', 'tx_bps', 'rx_pps', 'tx_pps']) assert.equal(typeof m.network[k], 'number');
    assert.ok(Array.isArray(m.network.interfaces));
    for (const i of m.network.interfaces) {
      assert.deepEqual(Object.keys(i).sort(), [
        'name',
        'rx_bps',
        'rx_drops',
        'rx_errors',
        'rx_pps',
        'tx_bps',
        'tx_drops',
        'tx_errors',
        'tx_pps',
      ]);
    }
    assert.equal(m.protection.backend, 'monitor');
    assert.equal(m.protection.backend_reason, 'protection.backend = monitor');
    assert.deepEqual(m.attacks, { active: 0, total: 0, last: null });
    assert.equal(m.alerter.webhook_set, false);
    assert.equal(m.alerter.queued, 0);
    assert.equal(m.alerter.sent, 0);
    assert.equal(m.alerter.dropped, 0);
    assert.equal(m.alerter.last_success_at, null);
    assert.equal(m.alerter.last_error, null);
    assert.deepEqual(m.errors, {});
  });

  test('/metrics/prometheus serves the same figures as text', async () => {
    const [text, json] = await Promise.all([
      request(`${agent.url}/metrics/prometheus`, { key: agent.key }),
      request(`${agent.url}/metrics`, { key: agent.key }),
    ]);
    assert.equal(text.status, 200);
    assert.match(text.body, /^# HELP palisade_agent_info /m);
    assert.match(text.body, /^# TYPE palisade_cpu_usage_percent gauge$/m);
    assert.match(text.body, /^palisade_agent_info\{version="0\.1\.0"\} 1$/m);
    const total = /^palisade_memory_total_bytes (\d+)$/m.exec(text.body);
    assert.equal(Number(total?.[1]), json.json.memory.total_mb * 1048576);
    assert.match(text.body, /^palisade_filesystem_size_bytes\{mount="\/",fstype="[^"]+"\} \d+$/m);
    assert.match(text.body, /^palisade_alerter_dropped_total 0$/m);
    for (const line of text.body.trim().split('\n')) {
      assert.match(line, /^(# (HELP|TYPE) \w+ .+|\w+(\{[^}]*\})? -?[\d.e+]+)$/, line);
    }
  });

  test('/metrics/prometheus names the collectors as the docs do (uptime, not uptime_s)', async () => {
    const text = (await request(`${agent.url}/metrics/prometheus`, { key: agent.key })).body;
    const names = [...text.matchAll(/^palisade_collector_success\{collector="([^"]+)"\} [01]$/gm)].map((m) => m[1]);
    assert.deepEqual(names, ['cpu', 'load', 'memory', 'disks', 'network', 'uptime']);
    assert.doesNotMatch(text, /collector="uptime_s"/);
    assert.doesNotMatch(text, /palisade_alerter_last_success_timestamp_seconds/, 'absent until a delivery succeeds');
  });

  test('a rotated key works at once and the old one stops, without a restart', async () => {
    const rotated = await runCli(['key', '--state-dir', agent.stateDir, '--config', agent.configFile]);
    assert.equal(rotated.code, 0, rotated.out);
    const newKey = keyFrom(rotated.stdout)!;
    assert.notEqual(newKey, agent.key);
    assert.match(rotated.stdout, new RegExp(`Metrics address: ${agent.url.replace(/[.]/g, '\\.')}`));
    assert.match(rotated.stdout, /previous key .* stopped working/);
    assert.equal((await request(`${agent.url}/health`, { key: agent.key })).status, 401);
    assert.equal((await request(`${agent.url}/health`, { key: newKey })).status, 200);
    agent.key = newKey;
  });

  test('POST /enroll validates and names the field', async () => {
    const url = `${agent.url}/enroll`;
    const post = (body: unknown) => request(url, { key: agent.key, method: 'POST', body });
    assert.equal((await request(url, { method: 'POST', body: {} })).status, 401);
    let res = await post('not json');
    assert.equal(res.status, 400);
    assert.match(res.json.error, /^body:/);
    res = await post({ token: generateToken('daemon') });
    assert.equal(res.status, 400);
    assert.match(res.json.error, /^console_url:/);
    res = await post({ console_url: 'ftp://x', token: generateToken('daemon') });
    assert.match(res.json.error, /^console_url:/);
    res = await post({ console_url: 'http://127.0.0.1:1' });
    assert.match(res.json.error, /^token:/);
    res = await post({ console_url: 'http://127.0.0.1:1', token: generateToken('agentKey') });
    assert.equal(res.status, 400);
    assert.match(res.json.error, /^token: expected a daemon token/);
  });

  test('POST /enroll persists (0600), checks in, backs off while the console is down, and never blocks the API', async () => {
    const port = await closedPort();
    const token = generateToken('daemon');
    const res = await request(`${agent.url}/enroll`, {
      key: agent.key,
      method: 'POST',
      body: { console_url: `http://127.0.0.1:${port}/`, token },
    });
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { enrolled: true });
    const file = join(agent.stateDir, 'enrolment.json');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(saved.console_url, `http://127.0.0.1:${port}`);
    assert.equal(saved.token, token);

    const status = await eventually('check-in failures', async () => {
      const m = (await request(`${agent.url}/metrics`, { key: agent.key })).json;
      return m.checkin.consecutive_failures >= 1 ? m.checkin : undefined;
    });
    assert.equal(status.state, 'backing_off');
    assert.match(status.last_error, /^could not reach the console: .*ECONNREFUSED/);
    // interval 1 s (the test config): the back-off never exceeds the interval.
    assert.equal(status.backoff_s, 1);
    assert.equal((await request(`${agent.url}/health`, { key: agent.key })).status, 200);

    const info = await runCli(['info', '--json', '--state-dir', agent.stateDir, '--config', agent.configFile]);
    assert.equal(info.code, 0, info.out);
    const parsed = JSON.parse(info.stdout);
    assert.equal(parsed.enrolment.console_url, `http://127.0.0.1:${port}`);
    assert.match(parsed.daemon.checkin.last_error, /could not reach the console/);
    assert.ok(!info.stdout.includes(token), 'info never prints the daemon token');
  });
});

describe('whitelist', () => {
  test('valid key from outside the whitelist: 403; wrong key from outside: still 401', async (t) => {
    const agent = await startAgent({ 'metrics.whitelist': '10.0.0.0/8, 2001:db8::/32' });
    t.after(() => agent.stop());
    const res = await request(`${agent.url}/health`, { key: agent.key });
    assert.equal(res.status, 403);
    assert.match(res.json.error, /127\.0\.0\.1 is not in metrics\.whitelist/);
    assert.equal((await request(`${agent.url}/metrics`, { key: agent.key })).status, 403);
    assert.equal((await request(`${agent.url}/health`, { key: generateToken('agentKey') })).status, 401);
    assert.equal((await request(`${agent.url}/health`)).status, 401);
  });

  test('valid key from inside the whitelist (a CIDR): 200', async (t) => {
    const agent = await startAgent({ 'metrics.whitelist': '10.0.0.0/8 127.0.0.0/8' });
    t.after(() => agent.stop());
    assert.equal((await request(`${agent.url}/health`, { key: agent.key })).status, 200);
  });

  test('dual-stack listener: IPv4-mapped clients match IPv4 entries; IPv6 clients match IPv6 entries', async (t) => {
    const agent = await startAgent({ 'metrics.listen': '[::]:0', 'metrics.whitelist': '127.0.0.1' });
    t.after(() => agent.stop());
    const port = new URL(agent.url).port;
    // The socket reports ::ffff:127.0.0.1 for this client.
    assert.equal((await request(`http://127.0.0.1:${port}/health`, { key: agent.key })).status, 200);
    const v6 = await request(`http://[::1]:${port}/health`, { key: agent.key });
    assert.equal(v6.status, 403);
    assert.match(v6.json.error, /::1 is not in/);

    const other = await startAgent({ 'metrics.listen': '[::]:0', 'metrics.whitelist': '::1/128,::ffff:10.0.0.0/104' });
    t.after(() => other.stop());
    const otherPort = new URL(other.url).port;
    assert.equal((await request(`http://[::1]:${otherPort}/health`, { key: other.key })).status, 200);
    assert.equal((await request(`http://127.0.0.1:${otherPort}/health`, { key: other.key })).status, 403);
  });
});

describe('TLS', () => {
  test('metrics.tls = on: the certificate made at first start has the fingerprint the CLI prints', async (t) => {
    const agent = await startAgent({ 'metrics.tls': 'on' });
    t.after(() => agent.stop());
    assert.match(agent.url, /^https:\/\//);
    const printed = /TLS certificate SHA-256 fingerprint: ([0-9A-F:]{95})/.exec(agent.output())?.[1];
    assert.ok(printed, agent.output());
    const peer = await new Promise<string>((resolve, reject) => {
      const req = https.get(
        `${agent.url}/health`,
        { rejectUnauthorized: false, agent: false, headers: { authorization: `Bearer ${agent.key}` } },
        (res) => {
          resolve((res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256);
          res.resume();
        },
      );
      req.on('error', reject);
    });
    assert.equal(peer, printed);
    assert.equal(statSync(join(agent.stateDir, 'tls-key.pem')).mode & 0o777, 0o600);
    const info = await runCli(['info', '--json', '--state-dir', agent.stateDir, '--config', agent.configFile]);
    assert.equal(JSON.parse(info.stdout).tls_fingerprint, printed);
    const res = await request(`${agent.url}/health`, { key: agent.key });
    assert.equal(res.status, 200);
  });
});
