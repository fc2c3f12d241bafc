// The control API of a real daemon process (monitor-only backend, so no root needed): every one
// of the 20 paths, its validation, persistence across a restart, feeds, and attack webhooks.
import assert from 'node:assert/strict';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { alertPayloadSchema } from '@palisade/protocol/webhooks';
import { type AgentProcess, eventually, request, spawnAgent, startAgent, startReceiver } from './agent-process.js';
import { controlCaller } from './control-contract.js';

const readIfThere = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

describe('control API (monitor-only backend)', () => {
  let agent: AgentProcess;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let feedBody = '# test feed\n192.0.2.0/24\n198.51.100.7\n';
  let feedStatus = 200;
  const feedServer = http.createServer((_req, res) => res.writeHead(feedStatus).end(feedBody));
  let feedUrl = '';
  const call = controlCaller(() => agent);

  before(async () => {
    receiver = await startReceiver('ok');
    await new Promise<void>((r) => feedServer.listen(0, '127.0.0.1', () => r()));
    feedUrl = `http://127.0.0.1:${(feedServer.address() as AddressInfo).port}/feed.txt`;
    agent = await startAgent({
      'alerter.url': receiver.url,
      'autofetch.feeds': `local=${feedUrl}`,
      'protection.check_interval_ms': '200',
      'protection.attack_end_s': '1',
      // Low, so the suite's own loopback connections would be a flood if loopback counted.
      'protection.conn_limit': '5',
    });
  });
  after(async () => {
    await agent.stop();
    await receiver.close();
    await new Promise((r) => feedServer.close(r));
  });

  test('auth: control paths need the key like /metrics', async () => {
    const res = await request(`${agent.url}/whitelist`);
    assert.equal(res.status, 401);
  });

  test('whitelist and blacklist: add, list, delete, import, clear; the whitelist wins', async () => {
    assert.equal((await call('POST', 'whitelist', { ip: '192.0.2.10', note: 'office' })).status, 200);
    const refused = await call('POST', 'blacklist', { ip: '192.0.2.10' });
    assert.equal(refused.status, 400);
    assert.match(refused.json.error, /whitelist always wins/);
    const bad = await call('POST', 'blacklist', { ip: '300.1.1.1' });
    assert.deepEqual(bad.json, { error: 'ip: "300.1.1.1" is not an IP address or CIDR range' });
    assert.equal((await call('POST', 'blacklist', { ip: '203.0.113.0/24', ttl_s: 600 })).status, 200);
    assert.equal((await call('POST', 'blacklist', { ip: '203.0.113.1', ttl_s: 0 })).status, 400);
    const list = await call('GET', 'blacklist');
    assert.equal(list.json.entries[0].ip, '203.0.113.0/24');
    assert.equal(list.json.entries[0].ttl_s, 600);
    const imported = await call('POST', 'whitelist/import', '10.0.0.0/8\n# c\nnot-an-ip\n192.0.2.10\n2001:db8::/48\n');
    assert.deepEqual(
      { added: imported.json.added, skipped: imported.json.skipped, invalid: imported.json.invalid },
      { added: 2, skipped: 1, invalid: 1 },
    );
    const arr = await call('POST', 'blacklist', ['198.51.100.1', '198.51.100.2', 'x']);
    assert.equal(arr.json.added, 2);
    assert.equal((await call('DELETE', 'blacklist?ip=198.51.100.1')).status, 200);
    assert.equal((await call('DELETE', 'blacklist', { ip: '198.51.100.2' })).status, 200);
    assert.equal((await call('DELETE', 'blacklist?ip=198.51.100.2')).status, 404);
    assert.equal((await call('POST', 'blacklist/clear')).json.removed, 1);
    assert.equal((await call('POST', 'whitelist/clear')).json.removed, 3);
    assert.equal((await call('PUT', 'whitelist')).status, 405);
  });

  test('geo: mode, countries, toggle; bad input is refused', async () => {
    assert.equal((await call('POST', 'geo/mode', { mode: 'block' })).status, 400);
    assert.match((await call('POST', 'geo/mode', { mode: 'deny', countries: ['QQ'] })).json.error, /unknown country/);
    assert.match((await call('POST', 'geo/mode', { mode: 'allow', countries: [] })).json.error, /at least one/);
    const on = await call('POST', 'geo/mode', { mode: 'deny', countries: ['nz'] });
    assert.equal(on.status, 200);
    assert.deepEqual(on.json.countries, ['NZ']);
    assert.ok(on.json.ranges > 10);
    const toggled = await call('POST', 'geo/toggle', { country: 'NZ' });
    assert.deepEqual(toggled.json.countries, []);
    assert.equal((await call('POST', 'geo/toggle', { country: 'NZL' })).status, 400);
    assert.equal((await call('POST', 'geo/mode', { mode: 'off' })).json.mode, 'off');
    assert.equal((await call('GET', 'geo/mode')).json.mode, 'off');
  });

  test('baseline: export, import, delete', async () => {
    const exported = await call('GET', 'baseline/export');
    assert.equal(exported.json.version, 1);
    const slots = Array.from({ length: 168 }, () => [100, 110, 90]);
    const imported = await call('POST', 'baseline/import', {
      version: 1,
      interfaces: { eth9: { pps: slots, bps: slots } },
    });
    assert.deepEqual(imported.json, { imported: true, interfaces: 1 });
    assert.deepEqual(Object.keys((await call('GET', 'baseline/export')).json.interfaces), ['eth9']);
    assert.equal((await call('POST', 'baseline/import', { version: 1, interfaces: { eth9: {} } })).status, 400);
    assert.deepEqual((await call('POST', 'baseline/delete')).json, { deleted: true });
  });

  test('feeds: toggle, fetch now, never-add and never-remove; a failed fetch keeps the previous list', async () => {
    assert.equal((await call('POST', 'autofetch/toggle', { enabled: 'yes' })).status, 400);
    assert.equal((await call('POST', 'autofetch/toggle', { enabled: true })).json.enabled, true);
    assert.equal((await call('POST', 'autofetch/never-add', { ip: '198.51.100.7' })).status, 200);
    assert.equal((await call('POST', 'autofetch/never-remove', { ip: '203.0.113.99' })).status, 200);
    assert.equal((await call('GET', 'autofetch/never-add')).json.entries.length, 1);
    const fetched = await call('POST', 'autofetch/fetch-now');
    assert.equal(fetched.json.feeds[0].entries, 2);
    const m = await call('GET', 'metrics');
    assert.equal(m.json.protection.blocked.feed, 2, 'the feed minus never-add plus never-remove');
    feedStatus = 503;
    const failed = await call('POST', 'autofetch/fetch-now', { feed: 'local' });
    assert.match(failed.json.feeds[0].last_error, /HTTP 503.*previous list \(2 entries\) is kept/);
    assert.equal(failed.json.feeds[0].entries, 2);
    assert.equal((await call('POST', 'autofetch/fetch-now', { feed: 'nope' })).status, 400);
    feedStatus = 200;
    feedBody = '';
    const config = await call('GET', 'config');
    assert.equal(config.json.autofetch.feeds[0].name, 'local');
  });

  test('schedule: list, set, refuse a bad cron or task, disable', async () => {
    const list = await call('GET', 'schedule');
    assert.ok(list.json.schedule.some((s: { task: string }) => s.task === 'autofetch'));
    assert.match((await call('POST', 'schedule', { task: 'autofetch', cron: '61 * * * *' })).json.error, /cron/);
    assert.match((await call('POST', 'schedule', { task: 'dance', cron: '0 3 * * *' })).json.error, /task/);
    const set = await call('POST', 'schedule', { task: 'attack-bans-clear', cron: '0 4 * * *' });
    // biome-ignore lint/suspicious/noExplicitAny: answer fields
    assert.ok(set.json.schedule.find((s: any) => s.task === 'attack-bans-clear').next_run_at > Date.now());
    const off = await call('DELETE', 'schedule?task=attack-bans-clear');
    // biome-ignore lint/suspicious/noExplicitAny: answer fields
    assert.equal(off.json.schedule.find((s: any) => s.task === 'attack-bans-clear').cron, null);
  });

  test('config: validated like the file, persisted, applied by reload', async () => {
    assert.match((await call('POST', 'config', { 'protection.conn_limit': 'lots' })).json.error, /whole number/);
    assert.match((await call('POST', 'config', { 'no.such': 1 })).json.error, /unknown config key/);
    assert.match((await call('POST', 'config', { 'metrics.whitelist': '192.0.2.0/24' })).json.error, /lock out/);
    const ok = await call('POST', 'config', { 'protection.conn_limit': 250 });
    assert.deepEqual(ok.json, { changed: ['protection.conn_limit'], reloaded: true });
    const read = await call('GET', 'config');
    assert.equal(read.json.values['protection.conn_limit'], '250');
    assert.equal(read.json.protection.connLimit, 250);
  });

  test('log pattern: a ban, an attack with its webhooks, and blacklisting its sources as a job', async () => {
    const log = join(agent.dir, 'app.log');
    writeFileSync(log, '');
    assert.match((await call('POST', 'block-pattern', { name: 'bad', file: log, regex: 'x(' })).json.error, /regex/);
    assert.match((await call('POST', 'block-pattern', { name: 'sshd', file: 'rel/path' })).json.error, /file/);
    const added = await call('POST', 'block-pattern', {
      name: 'app',
      file: log,
      regex: 'denied for (?<ip>\\S+)',
      threshold: 2,
      window_s: 60,
      ban_s: 30,
    });
    assert.equal(added.status, 200, added.body);
    assert.equal((await call('GET', 'block-pattern')).json.patterns[0].name, 'app');
    // The answer comes once the file is followed from its end: the lines written now are read.
    appendFileSync(log, 'denied for 203.0.113.44\ndenied for 203.0.113.44\n');
    const attack = await eventually('the attack', async () => (await call('GET', 'attacks')).json.attacks[0]);
    assert.equal(attack.kind, 'log_pattern');
    assert.deepEqual(attack.sources, [{ ip: '203.0.113.44', hits: 2 }]);
    assert.match(attack.action, /monitor-only/);
    const banned = (await call('GET', 'blacklist')).json.entries.find((e: { ip: string }) => e.ip === '203.0.113.44');
    assert.equal(banned.source, 'attack');
    assert.equal(banned.ttl_s, 30);
    const types = await eventually('both webhooks', () => {
      const t = receiver.deliveries.map((d) => JSON.parse(d.body));
      return t.some((p) => p.type === 'attack.ended') ? t : undefined;
    });
    // Both bodies are what the published webhook schema says (packages/protocol/src/webhooks.ts).
    for (const p of types) assert.ok(alertPayloadSchema.safeParse(p).success, JSON.stringify(p));
    const started = types.find((p) => p.type === 'attack.started');
    for (const k of ['id', 'kind', 'started_at', 'ended_at', 'peak_pps', 'peak_bps', 'sources', 'action'])
      assert.ok(k in started.attack, k);
    assert.equal(started.attack.id, attack.id);
    assert.ok(started.host.hostname);

    assert.equal((await call('POST', 'attacks/blacklist', { attack_id: 'atk_nope' })).status, 400);
    assert.equal((await call('DELETE', 'blacklist?ip=203.0.113.44')).status, 200);
    const job = await call('POST', 'attacks/blacklist', { attack_id: attack.id });
    assert.equal(job.json.started, true);
    const status = await eventually('the job', async () => {
      const s = (await call('GET', 'attacks/blacklist/status')).json;
      return s.state === 'done' ? s : undefined;
    });
    assert.deepEqual({ total: status.total, done: status.done, added: status.added }, { total: 1, done: 1, added: 1 });
    assert.equal((await call('DELETE', 'block-pattern?name=app')).status, 200);
    assert.equal((await call('DELETE', 'block-pattern?name=app')).status, 404);
  });

  test("every body is checked against its path's schema: a 400 names the field, nothing is stored", async () => {
    const before = (await call('GET', 'whitelist')).json;
    const cases: [string, string, unknown, RegExp][] = [
      ['POST', 'whitelist', { ip: 5, note: 'x' }, /^ip: expected an IP address or CIDR/],
      ['POST', 'whitelist', { ip: '192.0.2.99', ttl_s: 1.5 }, /^ttl_s: expected a whole number/],
      ['POST', 'whitelist/import', { entries: 'x' }, /^entries: expected a JSON array/],
      ['POST', 'whitelist/clear?source=everything', undefined, /^source: expected manual, attack, feed or import/],
      ['POST', 'geo/mode', { countries: 'DE' }, /^countries: expected a list/],
      ['POST', 'geo/mode', { mode: 'deny', countries: ['DE', 7] }, /^countries\[1\]: expected a two-letter/],
      ['POST', 'geo/toggle', {}, /^country: expected a two-letter/],
      [
        'POST',
        'baseline/import',
        { version: 1, interfaces: { eth0: { pps: [], bps: [] } } },
        /^interfaces\.eth0\.pps: expected 168 hour-of-week slots/,
      ],
      ['POST', 'autofetch/toggle', { enabled: 'yes' }, /^enabled: expected true or false/],
      ['POST', 'autofetch/fetch-now', { feed: 5 }, /^feed: expected the name of a feed/],
      ['POST', 'schedule', { task: 'autofetch', cron: 5 }, /^cron: expected a cron expression/],
      ['POST', 'block-pattern', { name: 'sshd', threshold: 0 }, /^threshold: expected a whole number from 1 to/],
      ['POST', 'attacks/blacklist', { attack_id: true }, /^attack_id: expected the id of an attack/],
      ['POST', 'config', { 'protection.conn_limit': { a: 1 } }, /^protection\.conn_limit: expected a string, number/],
      ['POST', 'config', [], /^body: expected a JSON object of config keys/],
    ];
    for (const [method, path, body, error] of cases) {
      const res = await call(method, path, body);
      assert.equal(res.status, 400, `${method} ${path}: ${res.body}`);
      assert.match(res.json.error, error, `${method} ${path}`);
    }
    assert.deepEqual((await call('GET', 'whitelist')).json, before);
    const wrongMethod = await call('PUT', 'whitelist', { ip: '192.0.2.99' });
    assert.equal(wrongMethod.status, 405);
    assert.match(wrongMethod.json.error, /use GET, POST, DELETE/);
  });

  test('loopback is never a flood and never banned: a busy local pool is the host itself', async () => {
    const sockets = Array.from({ length: 12 }, () =>
      net.connect({ host: '127.0.0.1', port: Number(new URL(agent.url).port) }).on('error', () => {}),
    );
    try {
      // Ten detection rounds, counted, with 12 connections from 127.0.0.1, over the limit of 5.
      const rounds = async () => (await call('GET', 'metrics')).json.protection.detection_rounds as number;
      const from = await rounds();
      await eventually('ten detection rounds', async () => ((await rounds()) >= from + 10 ? true : undefined));
      const attacks = (await call('GET', 'attacks')).json.attacks;
      assert.deepEqual(
        attacks.filter((a: { sources: { ip: string }[] }) => a.sources.some((s) => s.ip === '127.0.0.1')),
        [],
      );
    } finally {
      for (const s of sockets) s.destroy();
    }
    const refused = await call('POST', 'blacklist', { ip: '127.0.0.1' });
    assert.equal(refused.status, 400);
    assert.match(refused.json.error, /^ip: 127\.0\.0\.1 is a loopback address/);
    assert.equal((await call('POST', 'blacklist', { ip: '::1' })).status, 400);
  });

  test('/metrics shows the backend and the attack counts', async () => {
    const m = (await call('GET', 'metrics')).json;
    assert.equal(m.protection.backend, 'monitor');
    assert.ok(m.attacks.total >= 1);
    assert.equal(m.attacks.active, 0);
  });

  test('lists, geo and patterns survive a restart', async () => {
    await call('POST', 'whitelist', { ip: '192.0.2.77' });
    await call('POST', 'geo/mode', { mode: 'deny', countries: ['IS'] });
    await call('POST', 'block-pattern', { name: 'sshd', file: join(agent.dir, 'auth.log') });
    // Lists are saved 200 ms after a change: stop only once the whitelist on disk holds the address.
    const saved = join(agent.stateDir, 'protection', 'whitelist.json');
    await eventually('the whitelist saved', () => (readIfThere(saved).includes('192.0.2.77') ? true : undefined));
    const exited = new Promise((r) => agent.child.once('exit', r));
    agent.child.kill('SIGTERM');
    await exited;
    const again = await spawnAgent(['run', '--config', agent.configFile, '--state-dir', agent.stateDir]);
    assert.ok(!('exitCode' in again), JSON.stringify(again));
    if ('exitCode' in again) return;
    try {
      const get = (path: string) => request(`${again.url}/${path}`, { key: agent.key });
      assert.ok((await get('whitelist')).json.entries.some((e: { ip: string }) => e.ip === '192.0.2.77'));
      assert.deepEqual((await get('geo/mode')).json.countries, ['IS']);
      assert.ok((await get('block-pattern')).json.patterns.some((p: { name: string }) => p.name === 'sshd'));
      assert.ok((await get('attacks')).json.attacks.length >= 1);
    } finally {
      await again.stop();
    }
  });
});
