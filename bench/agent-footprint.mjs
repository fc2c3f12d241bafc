#!/usr/bin/env node
// The agent's footprint next to Prometheus node_exporter, measured in the same run on this host:
// resident memory, idle CPU over a quiet window, and the median latency of a metrics request, for
// each shipped form side by side: `node …/dist/src/cli.js`, the one-file `.mjs` and the single
// executable (the last two from `npm run package`; columns of forms not built show n/a).
// Bars (docs/performance.md): RSS ≤ 45 MB, idle CPU ≤ 0.5% of a core, /metrics median ≤ 2 ms.
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
const VERSION = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const FORMS = [
  { name: 'cli.js', cmd: process.execPath, args: [AGENT_CLI] },
  { name: '.mjs', cmd: process.execPath, args: [join(root, `dist/packages/palisade-agent-${VERSION}.mjs`)] },
  { name: 'executable', cmd: join(root, `dist/packages/palisade-agent-${VERSION}-linux-x64`), args: [] },
].filter((f) => existsSync(f.args[0] ?? f.cmd));
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

/** A /proc/<pid>/status memory line in MB: VmRSS, or RssAnon (what the process itself allocated). */
function statusMb(pid, field = 'VmRSS') {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : Number.NaN;
}

// Each form of the agent: loopback, default 2 s interval, its own state directory and a fresh key.
async function startAgent(form, i) {
  const conf = join(dir, `agent-${i}.conf`);
  const state = join(dir, `state-${i}`);
  writeFileSync(conf, 'metrics.listen = 127.0.0.1:0\n');
  const keyRun = spawnSync(form.cmd, [...form.args, 'key', '--state-dir', state, '--config', conf], {
    encoding: 'utf8',
  });
  const key = /agk_[0-9A-Za-z]+/.exec(keyRun.stdout)?.[0];
  if (!key) throw new Error(`palisade-agent key (${form.name}) failed: ${keyRun.stdout}${keyRun.stderr}`);
  const started = await start(
    form.cmd,
    [...form.args, 'run', '--config', conf, '--state-dir', state],
    async (out) => /listening on (http:\/\/\S+)/.exec(out)?.[1],
  );
  return { ...form, ...started, auth: { authorization: `Bearer ${key}` } };
}
const agents = [];
for (const [i, form] of FORMS.entries()) agents.push(await startAgent(form, i));
const missing = ['cli.js', '.mjs', 'executable'].filter((n) => !agents.some((a) => a.name === n));
if (missing.length > 0) console.log(`not built: ${missing.join(', ')} (npm run package); their columns show n/a`);

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

// Settle (start-up compilation and GC), then one quiet window with no requests for the idle CPU of all at once.
await new Promise((r) => setTimeout(r, 5000));
const measured = [...agents, ...(exporter ? [{ name: 'node_exp.', ...exporter }] : [])];
const before = measured.map((m) => cpuSeconds(m.child.pid));
const t0 = process.hrtime.bigint();
console.log(`measuring idle CPU over ${IDLE_S} s…`);
await new Promise((r) => setTimeout(r, IDLE_S * 1000));
const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
for (const [i, m] of measured.entries()) {
  m.cpu = (100 * (cpuSeconds(m.child.pid) - before[i])) / seconds;
  m.rssIdle = statusMb(m.child.pid);
  m.anonIdle = statusMb(m.child.pid, 'RssAnon');
}

// Sequential requests on one keep-alive connection, the way a scraper or the console polls.
const sequential = (url, headers = {}) => load({ url, total: REQUESTS, concurrency: 1, headersFor: () => headers });
for (const a of agents) {
  await sequential(`${a.url}/metrics`, a.auth); // warm-up
  a.json = await sequential(`${a.url}/metrics`, a.auth);
  a.prom = await sequential(`${a.url}/metrics/prometheus`, a.auth);
  a.rssAfter = statusMb(a.child.pid);
}
if (exporter) {
  const e = measured.at(-1);
  await load({ url: `${exporter.url}/metrics`, total: 20, concurrency: 1 });
  e.json = await sequential(`${exporter.url}/metrics`);
  e.prom = e.json;
  e.rssAfter = statusMb(e.child.pid);
}
for (const r of measured.flatMap((m) => [m.json, m.prom])) {
  if (Object.keys(r.statuses).some((s) => s !== '200')) {
    console.error(`agent-footprint: unexpected statuses ${JSON.stringify(r.statuses)}`);
    process.exit(1);
  }
}

const columns = ['cli.js', '.mjs', 'executable', 'node_exp.'];
const cell = (name, pick, unit) => {
  const m = measured.find((x) => x.name === name);
  const v = m ? pick(m) : Number.NaN;
  return (Number.isFinite(v) ? `${fmt(v, 2)} ${unit}` : 'n/a').padStart(12);
};
const forms = (pick) => agents.map(pick);
const verdict = (values, ok) => (values.length === 0 ? '' : values.every(ok) ? 'ok' : 'OVER');
const row = (label, pick, unit, bar, ok) =>
  console.log(
    `${label.padEnd(34)} ${columns.map((c) => cell(c, pick, unit)).join(' ')}   ${bar}${ok ? ` ${verdict(forms(pick), ok)}` : ''}`,
  );
console.log('');
console.log(`${''.padEnd(34)} ${columns.map((c) => c.padStart(12)).join(' ')}   bar`);
row(
  'resident memory, idle',
  (m) => m.rssIdle,
  'MB',
  '≤ 45 MB',
  (v) => v <= 45,
);
row('  of it anonymous (not the binary)', (m) => m.anonIdle, 'MB', '');
row(
  'resident memory, after requests',
  (m) => m.rssAfter,
  'MB',
  '≤ 45 MB',
  (v) => v <= 45,
);
row(
  `idle CPU (% of a core, ${IDLE_S} s)`,
  (m) => m.cpu,
  '%',
  '≤ 0.5%',
  (v) => v <= 0.5,
);
row(
  '/metrics JSON median',
  (m) => m.json.p50,
  'ms',
  '≤ 2 ms',
  (v) => v <= 2,
);
row(
  '/metrics/prometheus median',
  (m) => m.prom.p50,
  'ms',
  '≤ 2 ms',
  (v) => v <= 2,
);
row('/metrics JSON p99', (m) => m.json.p99, 'ms', '');
console.log('');
console.log(
  `(${REQUESTS} sequential keep-alive requests each; node_exporter ${EXPORTER ? 'measures on every scrape, its rows are its /metrics' : 'absent'}, the agent answers from memory; node ${process.version})`,
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
