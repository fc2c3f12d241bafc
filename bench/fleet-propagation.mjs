#!/usr/bin/env node
import { spawnSync } from 'node:child_process';
// Fleet policies (docs/protection.md, "Fleet policies"): how long a ban takes from the first server's
// decision to the last of the other servers, with real agent processes in monitor mode (bar: 100
// online servers in under 5 s). The reference, in the same run: the bench itself putting the same
// entry on the same servers through the console's control proxy, 25 calls at a time — what the
// console's propagation does, without the check-in and the database in between.
// Here every "server" shares this machine's cores, which real servers do not: the agents measure and
// look for attacks less often than by default (every 10 s), so 100 idle processes do not keep the
// cores busy, and the measurement starts once they have settled after starting.
// With --entries E: then E fleet blacklist entries added by hand reach every server (entries applied
// per second, and each agent's blacklist holds them all).
// Usage: node bench/fleet-propagation.mjs [--servers N] [--entries E]
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { arg, fmt, root, startProcess } from './lib.mjs';

const SERVERS = Number(arg('servers', '100'));
const ENTRIES = Number(arg('entries', '0'));
const BAN_S = 600;
const consoleCli = join(root, 'packages/console/dist/src/cli.js');
const agentCli = join(root, 'packages/agent/dist/src/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'palisade-fleet-bench-'));
const logFile = join(dir, 'app.log');
writeFileSync(logFile, '');
const stops = [];

async function startAgent(i) {
  const conf = join(dir, `a${i}.conf`);
  writeFileSync(
    conf,
    [
      'metrics.listen = 127.0.0.1:0',
      'checkin.interval_s = 30',
      'protection.backend = monitor',
      'metrics.interval_s = 10',
      `protection.check_interval_ms = ${i === 0 ? 500 : 10000}`,
      '',
    ].join('\n'),
  );
  const out = spawnSync(process.execPath, [agentCli, 'key', '--state-dir', join(dir, `a${i}`), '--config', conf], {
    encoding: 'utf8',
  });
  const key = /agk_[0-9A-Za-z]+/.exec(out.stdout + out.stderr)?.[0];
  if (!key) throw new Error(`palisade-agent key failed: ${out.stdout}${out.stderr}`);
  const proc = await startProcess(
    [agentCli, 'run', '--config', conf, '--state-dir', join(dir, `a${i}`)],
    {},
    /listening on (https?:\/\/\S+)/,
  );
  stops.push(proc.stop);
  return { ...proc, key };
}

try {
  const consoleProc = await startProcess([consoleCli], {
    PALISADE_DATA_DIR: join(dir, 'console'),
    PALISADE_PORT: '0',
    PALISADE_LOG_LEVEL: 'warn',
    PALISADE_BOOTSTRAP_ADMIN: '0',
    PALISADE_ALLOW_PRIVATE_TARGETS: '1',
  });
  stops.push(consoleProc.stop);
  const call = async (method, path, body, cookie) => {
    const res = await fetch(`${consoleProc.url}${path}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(cookie ? { cookie } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { res, json: await res.json() };
  };
  const reg = await call('POST', '/api/auth/register', {
    email: 'fleet@example.com',
    password: 'fleet-bench',
    name: 'F',
  });
  const cookie = reg.res.headers.get('set-cookie').split(';')[0];
  const product = (await call('POST', '/api/products', { catalog_id: 3 }, cookie)).json.data.product;

  const agents = [];
  for (let i = 0; i < SERVERS; i += 8) {
    const batch = await Promise.all(Array.from({ length: Math.min(8, SERVERS - i) }, (_, j) => startAgent(i + j)));
    agents.push(...batch);
  }
  const ids = [];
  for (const [i, agent] of agents.entries()) {
    const added = await call(
      'POST',
      '/api/servers',
      { product_id: product.id, name: `edge-${i + 1}`, api_url: agent.url, api_key: agent.key },
      cookie,
    );
    if (added.res.status !== 201) throw new Error(`add server ${i}: ${JSON.stringify(added.json)}`);
    ids.push(added.json.data.server.id);
  }
  console.log(`${SERVERS} agents (monitor mode) and one console on SQLite`);
  await sleep(15_000); // the agents settle after starting

  // Reference: the same entry put on the other servers by the bench through the control proxy.
  const others = ids.slice(1);
  const refStart = performance.now();
  for (let i = 0; i < others.length; i += 25) {
    await Promise.all(
      others
        .slice(i, i + 25)
        .map((id) =>
          call('POST', `/api/servers/${id}/control?path=blacklist`, { ip: '192.0.2.200', ttl_s: 60 }, cookie),
        ),
    );
  }
  const referenceMs = performance.now() - refStart;

  await call('POST', '/api/fleet/policies', { name: 'everywhere', trigger: 'pattern', scope: 'all' }, cookie);
  await call(
    'POST',
    `/api/servers/${ids[0]}/control?path=block-pattern`,
    { name: 'bench', file: logFile, regex: 'denied (?<ip>\\S+)', threshold: 1, window_s: 60, ban_s: BAN_S },
    cookie,
  );
  await sleep(500);
  appendFileSync(logFile, 'denied 198.51.100.9\n');

  let entry;
  for (let i = 0; ; i += 1) {
    const res = await call('GET', '/api/fleet/addresses?ip=198.51.100.9', undefined, cookie);
    entry = res.json.data.entries[0];
    if (entry && entry.counts.applied === others.length) break;
    if (i > 600) throw new Error(`not propagated: ${JSON.stringify(entry?.counts)}`);
    await sleep(100);
  }
  // The first server's decision: the ban's time, which the entry's expiry counts from.
  const decidedAt = entry.expires_at - BAN_S * 1000;
  const lastApplied = Math.max(...entry.servers.map((s) => s.applied_at));
  const propagationMs = lastApplied - decidedAt;
  console.log(
    `  reference: the bench puts one entry on ${others.length} servers through the proxy: ${fmt(referenceMs, 0)} ms`,
  );
  console.log(
    `  propagation: first server's decision → banned on all ${others.length} others: ${fmt(propagationMs, 0)} ms` +
      ` (${fmt(propagationMs / referenceMs, 2)} × the reference; bar < 5000 ms for 100 servers) ${propagationMs < 5000 ? 'PASS' : 'ABOVE BAR'}`,
  );

  if (ENTRIES > 0) {
    const started = performance.now();
    const ips = Array.from(
      { length: ENTRIES },
      (_, i) => `100.${64 + Math.floor(i / 65536)}.${(i >> 8) & 255}.${i & 255}`,
    );
    for (let i = 0; i < ips.length; i += 20) {
      await Promise.all(
        ips.slice(i, i + 20).map(async (ip) => {
          const res = await call('POST', '/api/fleet/entries', { list: 'black', ip, scope: 'all' }, cookie);
          if (res.res.status !== 201) throw new Error(`add ${ip}: ${JSON.stringify(res.json)}`);
        }),
      );
    }
    const added = performance.now() - started;
    for (let i = 0; ; i += 1) {
      // The list pages (docs/api.md, "Lists that page"): every page is counted.
      let waiting = 0;
      let cursor = null;
      do {
        const page = (
          await call(
            'GET',
            `/api/fleet/entries?list=black&limit=200${cursor ? `&cursor=${cursor}` : ''}`,
            undefined,
            cookie,
          )
        ).json.data;
        waiting += page.entries.reduce((n, e) => n + e.counts.pending, 0);
        cursor = page.next_cursor;
      } while (cursor);
      if (waiting === 0) break;
      if (i > 6000) throw new Error(`${waiting} applications still pending`);
      await sleep(500);
    }
    const applied = performance.now() - started;
    const held = (await call('GET', `/api/servers/${ids.at(-1)}/control?path=blacklist`, undefined, cookie)).json
      .entries.length;
    console.log(
      `  ${ENTRIES} fleet entries on ${SERVERS} servers: added through the API in ${fmt(added / 1000, 1)} s, ` +
        `on every server after ${fmt(applied / 1000, 1)} s (${fmt((ENTRIES * SERVERS) / (applied / 1000), 0)} applications/s); ` +
        `the last server's blacklist holds ${held} entries`,
    );
  }
} finally {
  for (const stop of stops.reverse()) stop();
  await sleep(500);
  rmSync(dir, { recursive: true, force: true });
}
