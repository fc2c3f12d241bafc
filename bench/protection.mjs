#!/usr/bin/env node
// Protection engine figures (docs/performance.md): detection latency of a connection flood and of a
// matching log line (bar: 3 s), and the time to load 100,000 blacklist entries into nftables
// (bar: 5 s), measured in a network namespace of its own when run as root with nft; and the time of
// `GET /blacklist?ip=` (which source holds an address) and of a feed page with that many feed entries.
// Usage: node bench/protection.mjs [--entries 100000]   (needs npm run build)
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const ENTRIES = arg('entries', 100_000);
const root = new URL('..', import.meta.url).pathname;
const AGENT_CLI = join(root, 'packages/agent/dist/src/cli.js');
const FIREWALL = join(root, 'packages/agent/dist/src/protection/firewall.js');
const NET = join(root, 'packages/agent/dist/src/lib/net.js');
if (!existsSync(AGENT_CLI)) {
  console.error('protection bench: run npm run build first');
  process.exit(1);
}

const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-protection-'));
const ns = `plb-${process.pid}`;
// Loopback is the host's own programs and never counts as a flood (docs/protection.md), so the
// flood comes from a TEST-NET address added to lo for the run (root only), removed at exit.
const FLOODER = '198.51.100.77';
let flooderAdded = false;
const children = [];
const sockets = [];
function cleanup() {
  for (const s of sockets) s.destroy();
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  spawnSync('ip', ['netns', 'del', ns], { stdio: 'ignore' });
  if (flooderAdded) spawnSync('ip', ['addr', 'del', `${FLOODER}/32`, 'dev', 'lo'], { stdio: 'ignore' });
  rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);
setTimeout(() => {
  console.error('protection bench: gave up after 120 s');
  process.exit(1);
}, 120_000).unref();

function freePort() {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function get(url, key) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers: { authorization: `Bearer ${key}` }, agent: false }, (res) => {
        let body = '';
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve(JSON.parse(body)));
      })
      .on('error', reject);
  });
}

function post(url, key, body) {
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(text),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

async function until(what, check, ms = 20_000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Detection latency, monitor-only: a connection flood from a local TEST-NET address, then a matching log line. */
async function detection() {
  flooderAdded =
    process.getuid?.() === 0 && spawnSync('ip', ['addr', 'add', `${FLOODER}/32`, 'dev', 'lo']).status === 0;
  const flooding = flooderAdded;
  const port = await freePort();
  // A feed of ENTRIES addresses for the lookup figures, served from loopback.
  const feedLines = Array.from({ length: ENTRIES }, (_, i) => `${100 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}.1`);
  const feed = http.createServer((_req, res) => res.end(`${feedLines.join('\n')}\n`));
  await new Promise((r) => feed.listen(0, '127.0.0.1', r));
  const config = join(dir, 'agent.conf');
  const log = join(dir, 'app.log');
  writeFileSync(log, '');
  writeFileSync(
    config,
    [
      `metrics.listen = 0.0.0.0:${port}`,
      'protection.backend = monitor',
      'protection.conn_limit = 50',
      'protection.check_interval_ms = 1000',
      'protection.attack_end_s = 2',
      `autofetch.feeds = bench=http://127.0.0.1:${feed.address().port}/feed.txt`,
    ].join('\n'),
  );
  const made = spawnSync(process.execPath, [AGENT_CLI, 'key', '--state-dir', join(dir, 'state'), '--config', config], {
    encoding: 'utf8',
  });
  const key = /agk_[0-9A-Za-z]+/.exec(made.stdout)?.[0];
  const agent = spawn(process.execPath, [AGENT_CLI, 'run', '--config', config, '--state-dir', join(dir, 'state')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(agent);
  let out = '';
  agent.stdout.on('data', (d) => {
    out += d;
  });
  await until('the agent', () => (out.includes('listening on') ? true : undefined));
  const url = `http://127.0.0.1:${port}`;
  const floodAt = Date.now();
  let flood = null;
  if (flooding) {
    for (let i = 0; i < 80; i++)
      sockets.push(net.connect({ host: FLOODER, port, localAddress: FLOODER }).on('error', () => {}));
    flood = await until('the flood attack', async () =>
      (await get(`${url}/attacks`, key)).attacks.find((a) => a.kind === 'conn_flood'),
    );
    for (const s of sockets.splice(0)) s.destroy();
  }
  await post(`${url}/block-pattern`, key, {
    name: 'bench',
    file: log,
    regex: 'denied (?<ip>\\S+)',
    threshold: 1,
    window_s: 60,
    ban_s: 60,
  });
  await new Promise((r) => setTimeout(r, 1500));
  const lineAt = Date.now();
  appendFileSync(log, 'denied 203.0.113.9\n');
  const logged = await until('the log attack', async () =>
    (await get(`${url}/attacks`, key)).attacks.find((a) => a.kind === 'log_pattern'),
  );
  // The lookup walks every feed line (a linear scan) and the lists: the median of 21 lookups, then
  // the first feed page and one from the middle (sorted once, on the first page asked for).
  await post(`${url}/autofetch/toggle`, key, { enabled: true });
  await post(`${url}/autofetch/fetch-now`, key, {});
  const timed = async (path) => {
    const t = performance.now();
    const answer = await get(`${url}/${path}`, key);
    return { ms: performance.now() - t, answer };
  };
  const lookups = [];
  for (let i = 0; i < 21; i++) lookups.push((await timed(`blacklist?ip=${feedLines[(i * 7919) % ENTRIES]}`)).ms);
  const hit = (await timed(`blacklist?ip=${feedLines[ENTRIES - 1]}`)).answer;
  const first = await timed('blacklist?source=feed:bench&limit=1000');
  const middle = await timed(`blacklist?source=feed:bench&limit=1000&cursor=${feedLines[ENTRIES >> 1]}`);
  agent.kill('SIGTERM');
  feed.close();
  return {
    flood: flood ? flood.started_at - floodAt : null,
    log: logged.started_at - lineAt,
    lookupMs: lookups.sort((a, b) => a - b)[10],
    lookupFound: hit.decided_by === 'feed',
    firstPageMs: first.ms,
    middlePageMs: middle.ms,
    total: first.answer.total,
  };
}

/** 100,000 entries through the agent's own nft path, into a table in a namespace of its own. */
async function load() {
  if (process.getuid?.() !== 0) return { skipped: 'not root' };
  for (const tool of ['ip', 'nft']) if (spawnSync(tool, ['--version']).error) return { skipped: `no ${tool}` };
  spawnSync('ip', ['netns', 'add', ns]);
  const { nftablesFirewall, nftRunner, elementOf } = await import(FIREWALL);
  const { bigIntToAddress, parseNetwork } = await import(NET);
  const run = nftRunner(['ip', 'netns', 'exec', ns]);
  const fw = nftablesFirewall({ run, clock: Date.now, log: () => {} });
  const sets = { allow: [], manual: [], attack: [], feed: [], geo: [] };
  await fw.apply({ sets, geoMode: 'off' }, 'all');
  const base = parseNetwork('100.0.0.0').start;
  const now = Date.now();
  for (let i = 0; i < ENTRIES; i++) {
    // Every third entry a /30 CIDR, every fifth with a timeout: the mix a real blacklist holds.
    const addr = bigIntToAddress(base + BigInt(i * 4), 4);
    const n = parseNetwork(i % 3 === 0 ? `${addr}/30` : addr);
    sets.manual.push(elementOf(n, i % 5 === 0 ? now + 3600_000 : undefined));
  }
  const started = performance.now();
  await fw.apply({ sets, geoMode: 'off' }, ['manual']);
  const ms = performance.now() - started;
  const listed = await run(['list', 'set', 'inet', 'palisade', 'manual_v4']);
  const count = (listed.match(/100\.\d+\.\d+\.\d+/g) ?? []).length;
  return { ms, count };
}

const d = await detection();
console.log(
  d.flood === null
    ? 'detection latency, connection flood: skipped (needs root to add a TEST-NET address: loopback is never a flood)'
    : `detection latency, connection flood (80 connections, 1 s checks): ${d.flood} ms  (bar 3000 ms: ${d.flood <= 3000 ? 'met' : 'MISSED'})`,
);
console.log(
  `detection latency, matching log line:                            ${d.log} ms  (bar 3000 ms: ${d.log <= 3000 ? 'met' : 'MISSED'})`,
);
console.log(
  `lookup GET /blacklist?ip= with ${d.total} feed entries: median ${d.lookupMs.toFixed(1)} ms of 21${d.lookupFound ? '' : '  (the feed entry was NOT found)'}`,
);
console.log(
  `feed page of 1000 entries: first ${d.firstPageMs.toFixed(1)} ms (sorts the feed once), from the middle ${d.middlePageMs.toFixed(1)} ms`,
);
const l = await load();
if (l.skipped) console.log(`nftables load of ${ENTRIES} entries: skipped (${l.skipped})`);
else
  console.log(
    `nftables load of ${ENTRIES} entries (one nft -f transaction): ${(l.ms / 1000).toFixed(2)} s, ${l.count} elements listed  (bar 5 s: ${l.ms < 5000 ? 'met' : 'MISSED'})`,
  );
process.exit(0);
