#!/usr/bin/env node
// The outbound link (docs/agent.md, "Outbound link"): the metrics proxy's latency through an agent's
// link beside the same proxy to an agent called directly (bar: ≤ 2 ms added at the median, as the
// direct proxy's bar), and the console's resident memory per 1,000 idle links (aim ≤ 50 KB a link).
// The links are opened by this process pinned to the other core than the console's (taskset), from
// several loopback addresses (the console allows 600 link upgrades a minute from one address).
// Usage: node bench/link-latency.mjs [--requests N] [--links L]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { arg, fmt, percentile, startProcess, timedGetter } from './lib.mjs';

const REQUESTS = Number(arg('requests', '2000'));
const LINKS = Number(arg('links', '1000'));
const root = new URL('..', import.meta.url).pathname;
const require = createRequire(join(root, 'packages/console/package.json'));
const Database = require('better-sqlite3');
const { WebSocket } = require('ws');
const { generateToken, hashToken } = await import(join(root, 'packages/protocol/dist/src/tokens.js'));
const consoleCli = join(root, 'packages/console/dist/src/cli.js');
const agentCli = join(root, 'packages/agent/dist/src/cli.js');

const dir = mkdtempSync(join(tmpdir(), 'palisade-link-bench-'));
async function startAgent(name, extra) {
  const conf = join(dir, `${name}.conf`);
  writeFileSync(conf, `metrics.listen = 127.0.0.1:0\ncheckin.interval_s = 30\nprotection.backend = monitor\n${extra}`);
  const keyOut = spawnSync(process.execPath, [agentCli, 'key', '--state-dir', join(dir, name), '--config', conf], {
    encoding: 'utf8',
  });
  const key = /agk_[0-9A-Za-z]+/.exec(keyOut.stdout + keyOut.stderr)?.[0];
  if (!key) throw new Error(`palisade-agent key failed: ${keyOut.stdout}${keyOut.stderr}`);
  const proc = await startProcess(
    [agentCli, 'run', '--config', conf, '--state-dir', join(dir, name)],
    {},
    /listening on (https?:\/\/\S+)/,
  );
  return { ...proc, key };
}
const direct = await startAgent('direct', '');
const linked = await startAgent('linked', 'console.connect = outbound\n');
const consoleProc = await startProcess([consoleCli], {
  PALISADE_DATA_DIR: join(dir, 'console'),
  PALISADE_PORT: '0',
  PALISADE_LOG_LEVEL: 'warn',
  PALISADE_BOOTSTRAP_ADMIN: '0',
  PALISADE_ALLOW_PRIVATE_TARGETS: '1',
});

const call = async (method, path, body, cookie) => {
  const res = await fetch(`${consoleProc.url}${path}`, {
    method,
    headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(cookie ? { cookie } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  return { res, json: await res.json() };
};
const reg = await call('POST', '/api/auth/register', { email: 'link@example.com', password: 'link-bench', name: 'L' });
const cookie = reg.res.headers.get('set-cookie').split(';')[0];
const product = (await call('POST', '/api/products', { catalog_id: 2 }, cookie)).json.data.product;
const add = async (name, agent) =>
  (await call('POST', '/api/servers', { product_id: product.id, name, api_url: agent.url, api_key: agent.key }, cookie))
    .json.data.server;
const directServer = await add('direct', direct);
const linkedServer = await add('linked', linked);
for (let i = 0; ; i += 1) {
  const connection = (await call('GET', `/api/servers/${linkedServer.id}`, undefined, cookie)).json.data.server
    .connection;
  if (connection.link === 'up') break;
  if (i > 100) throw new Error('the link did not come up');
  await sleep(100);
}

const timed = timedGetter();
const get = timed.get;

/** Alternates the two proxied calls, one at a time, so both see the same machine state. */
async function measure() {
  const viaDirect = [];
  const viaLink = [];
  for (let i = 0; i < REQUESTS; i += 1) {
    viaDirect.push(await get(`${consoleProc.url}/api/servers/${directServer.id}/metrics`, { cookie }));
    viaLink.push(await get(`${consoleProc.url}/api/servers/${linkedServer.id}/metrics`, { cookie }));
  }
  return { viaDirect: viaDirect.sort((a, b) => a - b), viaLink: viaLink.sort((a, b) => a - b) };
}
await measure(); // warm-up
const { viaDirect, viaLink } = await measure();
const added = percentile(viaLink, 50) - percentile(viaDirect, 50);
console.log(`metrics proxy, ${REQUESTS} calls each`);
console.log(
  `  to an agent directly : median ${fmt(percentile(viaDirect, 50), 3)} ms, p99 ${fmt(percentile(viaDirect, 99), 3)} ms`,
);
console.log(
  `  through its link     : median ${fmt(percentile(viaLink, 50), 3)} ms, p99 ${fmt(percentile(viaLink, 99), 3)} ms`,
);
console.log(`  the link adds at the median: ${fmt(added, 3)} ms (bar ≤ 2 ms) ${added <= 2 ? 'PASS' : 'ABOVE BAR'}`);

// Idle links: LINKS servers with daemon tokens of their own, written beside the linked one.
const db = new Database(join(dir, 'console', 'console.db'));
const template = db.prepare('SELECT * FROM servers WHERE id = ?').get(linkedServer.id);
const tokens = [];
const insert = db.prepare(
  `INSERT INTO servers (${Object.keys(template)
    .filter((k) => k !== 'id')
    .join(', ')}) VALUES (${Object.keys(template)
    .filter((k) => k !== 'id')
    .map((k) => `@${k}`)
    .join(', ')})`,
);
db.transaction(() => {
  for (let i = 0; i < LINKS; i += 1) {
    const token = generateToken('daemon');
    tokens.push(token);
    const { id: _id, ...row } = template;
    insert.run({ ...row, name: `idle-${i}`, daemon_token_hash: hashToken(token) });
  }
})();
db.close();

// The client side of 1,000 links is this process, pinned to the other core than the console's, so
// its work does not count as the console's (the figure is the console's resident memory only).
const pinned = spawnSync('taskset', ['-pc', '0', String(consoleProc.child.pid)]).status === 0;
if (pinned) spawnSync('taskset', ['-pc', '1', String(process.pid)]);
const rssKb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${consoleProc.child.pid}/status`, 'utf8'))[1]);
await sleep(2000);
const before = rssKb();
const sockets = [];
for (let i = 0; i < LINKS; i += 1) {
  const ws = new WebSocket(`${consoleProc.url.replace(/^http/, 'ws')}/api/agent/link`, {
    headers: { authorization: `Bearer ${tokens[i]}` },
    perMessageDeflate: false,
    // Link upgrades are limited per source address (600 a minute): 500 links from each loopback address.
    localAddress: `127.0.0.${2 + Math.floor(i / 500)}`,
  });
  // Answers as an agent would: the console asks each new link's /health once.
  const health = Buffer.from(JSON.stringify({ status: 'ok', version: '0.1.0', uptime_s: 1 })).toString('base64');
  ws.on('message', (data) => {
    const frame = JSON.parse(data.toString());
    if (frame.type === 'request')
      ws.send(
        JSON.stringify({ type: 'response', id: frame.id, status: 200, content_type: 'application/json', body: health }),
      );
  });
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  sockets.push(ws);
}
await sleep(5000);
const after = rssKb();
const held = (await call('GET', `/api/servers/${linkedServer.id + LINKS}`, undefined, cookie)).json.data.server
  .connection;
if (held.link !== 'up') throw new Error(`the last idle link is not held: ${JSON.stringify(held)}`);
const perLink = (after - before) / LINKS;
console.log(
  `console RSS: ${fmt(before / 1024, 1)} MB before, ${fmt(after / 1024, 1)} MB with ${LINKS} idle links: ` +
    `${fmt(perLink, 1)} KB a link (aim ≤ 50 KB) ${perLink <= 50 ? 'PASS' : 'ABOVE AIM'}` +
    `${pinned ? " (console on core 0, the links' client on core 1)" : ' (taskset missing: not pinned)'}`,
);

for (const ws of sockets) ws.terminate();
timed.close();
direct.stop();
linked.stop();
consoleProc.stop();
await sleep(500);
rmSync(dir, { recursive: true, force: true });
