#!/usr/bin/env node
// The agent's footprint next to Prometheus node_exporter, measured in the same run on this host:
// resident memory, idle CPU over a quiet window, and the median latency of a metrics request.
// Bars (docs/performance.md): RSS ≤ 60 MB, idle CPU ≤ 0.5% of a core, /metrics median ≤ 2 ms.
// Usage: node bench/agent-footprint.mjs [--idle-s 45] [--requests 300]
// Needs the built agent (npm run build); node_exporter comes from Debian's prometheus-node-exporter.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, load } from './lib.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const IDLE_S = Math.min(60, arg('idle-s', 45));
const REQUESTS = Math.min(5000, arg('requests', 300));
const root = new URL('..', import.meta.url).pathname;
const AGENT_CLI = join(root, 'packages/agent/dist/src/cli.js');
const EXPORTER = ['/usr/bin/prometheus-node-exporter', '/usr/bin/node_exporter', '/usr/local/bin/node_exporter'].find(
  existsSync,
);
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

if (!existsSync(AGENT_CLI)) {
  console.error(`agent-footprint: ${AGENT_CLI} is missing; run npm run build first`);
  process.exit(1);
}

const children = [];
const dir = mkdtempSync(join(tmpdir(), 'palisade-bench-agent-'));
function cleanup() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
}
process.on('exit', cleanup);
const guard = setTimeout(() => {
  console.error('agent-footprint: gave up after 110 s');
  process.exit(1);
}, 110_000);
guard.unref();

/** Spawns a program and resolves once `ready()` says it answers. */
async function start(cmd, args, ready) {
  const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
  });
  child.stderr.on('data', (d) => {
    out += d;
  });
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`${cmd} exited: ${out}`);
    const url = await ready(out).catch(() => null);
    if (url) return { child, url, output: () => out };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${cmd} did not start: ${out}`);
}

function freePort() {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function get(url, headers = {}) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers, agent: false }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      })
      .on('error', reject);
  });
}

/** user+system CPU seconds of a process, from /proc/<pid>/stat. */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

function rssMb(pid) {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

// The agent: loopback, default 2 s interval, a fresh key.
const conf = join(dir, 'agent.conf');
writeFileSync(conf, 'metrics.listen = 127.0.0.1:0\n');
const keyRun = spawnSync(process.execPath, [AGENT_CLI, 'key', '--state-dir', join(dir, 'state'), '--config', conf], {
  encoding: 'utf8',
});
const key = /agk_[0-9A-Za-z]+/.exec(keyRun.stdout)?.[0];
if (!key) {
  console.error(`agent-footprint: palisade-agent key failed: ${keyRun.stdout}${keyRun.stderr}`);
  process.exit(1);
}
const agent = await start(
  process.execPath,
  [AGENT_CLI, 'run', '--config', conf, '--state-dir', join(dir, 'state')],
  async (out) => /listening on (http:\/\/\S+)/.exec(out)?.[1],
);
const auth = { authorization: `Bearer ${key}` };

let exporter = null;
if (EXPORTER) {
  const port = await freePort();
  exporter = await start(EXPORTER, [`--web.listen-address=127.0.0.1:${port}`], async () => {
    const url = `http://127.0.0.1:${port}`;
    return (await get(`${url}/metrics`)) === 200 ? url : null;
  });
} else {
  console.log('node_exporter not found (apt-get install prometheus-node-exporter); its column shows n/a');
}

// Settle (start-up compilation and GC), then a quiet window with no requests for the idle CPU of both at once.
await new Promise((r) => setTimeout(r, 5000));
const pids = { agent: agent.child.pid, exporter: exporter?.child.pid };
const before = { agent: cpuSeconds(pids.agent), exporter: pids.exporter ? cpuSeconds(pids.exporter) : 0 };
const t0 = process.hrtime.bigint();
console.log(`measuring idle CPU over ${IDLE_S} s…`);
await new Promise((r) => setTimeout(r, IDLE_S * 1000));
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
const idlePct = (name) => (pids[name] ? (100 * (cpuSeconds(pids[name]) - before[name])) / seconds : Number.NaN);
const results = {
  agent: { rssIdle: rssMb(pids.agent), cpu: idlePct('agent') },
  exporter: { rssIdle: pids.exporter ? rssMb(pids.exporter) : Number.NaN, cpu: idlePct('exporter') },
};

// Sequential requests on one keep-alive connection, the way a scraper or the console polls.
const sequential = (url, headers = {}) => load({ url, total: REQUESTS, concurrency: 1, headersFor: () => headers });
await sequential(`${agent.url}/metrics`, auth); // warm-up
const agentJson = await sequential(`${agent.url}/metrics`, auth);
const agentProm = await sequential(`${agent.url}/metrics/prometheus`, auth);
let exporterScrape = null;
if (exporter) {
  await load({ url: `${exporter.url}/metrics`, total: 20, concurrency: 1 });
  exporterScrape = await sequential(`${exporter.url}/metrics`);
}
results.agent.rssAfter = rssMb(pids.agent);
results.exporter.rssAfter = pids.exporter ? rssMb(pids.exporter) : Number.NaN;
for (const r of [agentJson, agentProm, exporterScrape]) {
  if (r && Object.keys(r.statuses).some((s) => s !== '200')) {
    console.error(`agent-footprint: unexpected statuses ${JSON.stringify(r.statuses)}`);
    process.exit(1);
  }
}

const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b > 0 ? `${fmt(a / b, 2)}×` : 'n/a');
const verdict = (ok) => (ok ? 'ok' : 'OVER');
const row = (label, a, b, unit, bar) =>
  console.log(
    `${label.padEnd(34)} ${`${fmt(a, 2)} ${unit}`.padStart(12)} ${`${fmt(b, 2)} ${unit}`.padStart(12)} ${ratio(a, b).padStart(8)}   ${bar}`,
  );
console.log('');
console.log(`${''.padEnd(34)} ${'agent'.padStart(12)} ${'node_exp.'.padStart(12)} ${'ratio'.padStart(8)}   bar`);
row(
  'resident memory, idle',
  results.agent.rssIdle,
  results.exporter.rssIdle,
  'MB',
  `≤ 60 MB ${verdict(results.agent.rssIdle <= 60)}`,
);
row(
  'resident memory, after requests',
  results.agent.rssAfter,
  results.exporter.rssAfter,
  'MB',
  `≤ 60 MB ${verdict(results.agent.rssAfter <= 60)}`,
);
row(
  `idle CPU (% of a core, ${IDLE_S} s)`,
  results.agent.cpu,
  results.exporter.cpu,
  '%',
  `≤ 0.5% ${verdict(results.agent.cpu <= 0.5)}`,
);
row(
  '/metrics JSON median',
  agentJson.p50,
  exporterScrape?.p50 ?? Number.NaN,
  'ms',
  `≤ 2 ms ${verdict(agentJson.p50 <= 2)}`,
);
row(
  '/metrics/prometheus median',
  agentProm.p50,
  exporterScrape?.p50 ?? Number.NaN,
  'ms',
  `≤ 2 ms ${verdict(agentProm.p50 <= 2)}`,
);
row('/metrics JSON p99', agentJson.p99, exporterScrape?.p99 ?? Number.NaN, 'ms', '');
console.log('');
console.log(
  `(${REQUESTS} sequential keep-alive requests each; node_exporter ${EXPORTER ? 'measures on every scrape' : 'absent'}, the agent answers from memory; node ${process.version})`,
);
clearTimeout(guard);
// Stop the programs and wait for them: the agent writes its state as it stops, so removing the
// directory under it would race.
await Promise.all(
  children
    .filter((c) => c.exitCode === null && c.signalCode === null)
    .map((c) => new Promise((resolve) => c.once('exit', resolve).kill('SIGTERM'))),
);
process.exit(0);
