#!/usr/bin/env node
// Metrics proxy: the latency the console adds over calling the agent's /metrics directly, first
// with nothing else going on, then while N open server pages poll through the console every 2 s.
// Bar (../shared/DESIGN.md, docs/performance.md): ≤ 0.5 ms added at the median. A bare node:http
// hop, measured in the same alternation, shows what any Node proxy adds on this machine. The console
// (and the bare hop) run pinned to core 1, the agent and this client to core 0 (taskset), so the
// medians are not the scheduler moving processes between cores; CPU per call comes from /proc.
// Usage: node bench/metrics-proxy.mjs [--requests N] [--pages P] [--console path/to/cli.js] [--pin no]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, cpuSeconds, fmt, percentile, startPinned, stopChild, timedGetter } from './lib.mjs';

const REQUESTS = Number(arg('requests', '2000'));
const PAGES = Number(arg('pages', '500'));
const BAR_MS = 0.5;
const root = new URL('..', import.meta.url).pathname;
// --console PATH: another build's cli.js (a before/after comparison on the same machine state).
const consoleCli = arg('console', join(root, 'packages/console/dist/src/cli.js'));
const agentCli = join(root, 'packages/agent/dist/src/cli.js');

// This client shares core 0 with the agent: one call is in flight at a time, so they take turns.
// --pin no: nothing pinned (on a machine whose cores other work keeps busy, a pinned process waits for its core).
const pinned = arg('pin', 'yes') !== 'no' && !spawnSync('taskset', ['-a', '-p', '-c', '0', String(process.pid)]).error;

const dir = mkdtempSync(join(tmpdir(), 'palisade-proxy-bench-'));
const agentConf = join(dir, 'agent.conf');
writeFileSync(agentConf, 'metrics.listen = 127.0.0.1:0\ncheckin.interval_s = 30\n');
const keyOut = spawnSync(
  process.execPath,
  [agentCli, 'key', '--state-dir', join(dir, 'agent'), '--config', agentConf],
  { encoding: 'utf8' },
);
const key = /agk_[0-9A-Za-z]+/.exec(keyOut.stdout + keyOut.stderr)?.[0];
if (!key) throw new Error(`palisade-agent key failed: ${keyOut.stdout}${keyOut.stderr}`);
const agent = await startPinned(
  [agentCli, 'run', '--config', agentConf, '--state-dir', join(dir, 'agent')],
  {},
  pinned ? '0' : null,
  join(dir, 'agent.log'),
);
const consoleProc = await startPinned(
  [consoleCli],
  {
    PALISADE_DATA_DIR: join(dir, 'console'),
    PALISADE_PORT: '0',
    PALISADE_LOG_LEVEL: 'warn',
    PALISADE_BOOTSTRAP_ADMIN: '0',
    PALISADE_ALLOW_PRIVATE_TARGETS: '1',
  },
  pinned ? '1' : null,
  join(dir, 'console.log'),
);

const post = async (path, body, cookie) => {
  const res = await fetch(`${consoleProc.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(cookie ? { cookie } : {}) },
    body: JSON.stringify(body),
  });
  return { res, json: await res.json() };
};
const reg = await post('/api/auth/register', { email: 'proxy@example.com', password: 'proxy-bench', name: 'Proxy' });
const cookie = reg.res.headers.get('set-cookie').split(';')[0];
const product = (await post('/api/products', { catalog_id: 2 }, cookie)).json.data.product;
const server = (
  await post('/api/servers', { product_id: product.id, name: 'bench', api_url: agent.url, api_key: key }, cookie)
).json.data.server;
const proxiedUrl = `${consoleProc.url}/api/servers/${server.id}/metrics`;
// A second reference: a bare node:http proxy on the console's core, keep-alive to the agent, that
// parses the answer and passes its bytes on: what any Node hop costs on this machine.
const BARE = `import http from 'node:http';
const agent = new http.Agent({ keepAlive: true });
http.createServer((req, res) => {
  http.get(process.argv[1] + '/metrics', { agent, headers: { authorization: req.headers['x-agent-key'] } }, (r) => {
    const chunks = [];
    r.on('data', (c) => chunks.push(c));
    r.on('end', () => {
      const body = Buffer.concat(chunks);
      JSON.parse(body.toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': body.length }).end(body);
    });
  });
}).listen(0, '127.0.0.1', function () { console.log('listening on http://127.0.0.1:' + this.address().port); });`;
const bare = await startPinned(
  ['--input-type=module', '-e', BARE, agent.url],
  {},
  pinned ? '1' : null,
  join(dir, 'bare.log'),
);

const timed = timedGetter();
const get = timed.get;
let background = 0;

/**
 * Alternates direct, proxied and bare-proxy calls, one at a time, so all see the same machine state;
 * the console's and the bare proxy's CPU per call are read from /proc around it.
 */
async function measure() {
  const direct = [];
  const proxied = [];
  const bareProxied = [];
  const cpuBefore = cpuSeconds(consoleProc.child.pid);
  const bareCpuBefore = cpuSeconds(bare.child.pid);
  const backgroundBefore = background;
  for (let i = 0; i < REQUESTS; i += 1) {
    direct.push(await get(`${agent.url}/metrics`, { authorization: `Bearer ${key}` }));
    proxied.push(await get(proxiedUrl, { cookie }));
    bareProxied.push(await get(bare.url, { 'x-agent-key': `Bearer ${key}` }));
  }
  const calls = REQUESTS + background - backgroundBefore;
  const cpuUs = ((cpuSeconds(consoleProc.child.pid) - cpuBefore) * 1e6) / calls;
  const bareCpuUs = ((cpuSeconds(bare.child.pid) - bareCpuBefore) * 1e6) / REQUESTS;
  for (const list of [direct, proxied, bareProxied]) list.sort((a, b) => a - b);
  return { direct, proxied, bareProxied, cpuUs, bareCpuUs };
}

const report = (name, { direct, proxied, bareProxied, cpuUs, bareCpuUs }) => {
  const median = (list) => percentile(list, 50);
  const line = (list) => `median ${fmt(median(list), 3)} ms, p99 ${fmt(percentile(list, 99), 3)} ms`;
  const added = median(proxied) - median(direct);
  console.log(`${name}`);
  console.log(`  agent directly (reference)  : ${line(direct)}`);
  console.log(`  through the console         : ${line(proxied)}; console CPU ${fmt(cpuUs, 0)} µs a call`);
  console.log(
    `  through a bare node:http hop: ${line(bareProxied)}; its CPU ${fmt(bareCpuUs, 0)} µs a call (adds ${fmt(median(bareProxied) - median(direct), 3)} ms)`,
  );
  console.log(
    `  added by the console at the median: ${fmt(added, 3)} ms (bar ≤ ${BAR_MS} ms) ${added <= BAR_MS ? 'PASS' : 'ABOVE BAR'}; ratio ${fmt(median(proxied) / median(direct), 2)}×`,
  );
};

console.log(
  pinned
    ? 'console and the bare proxy pinned to core 1, the agent and this client to core 0 (taskset)'
    : 'nothing pinned (--pin no, or taskset not found)',
);
await measure(); // warm-up
report(`idle, ${REQUESTS} calls each`, await measure());

// N open pages, each polling every 2 s, spread evenly over the 2 s.
const pageAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const timers = [];
for (let p = 0; p < PAGES; p += 1) {
  setTimeout(
    () => {
      timers.push(
        setInterval(() => {
          http
            .get(proxiedUrl, { agent: pageAgent, headers: { cookie } }, (res) => {
              res.resume();
              background += 1;
            })
            .on('error', () => {});
        }, 2000),
      );
    },
    (2000 * p) / PAGES,
  );
}
await new Promise((r) => setTimeout(r, 3000));
report(`with ${PAGES} open pages polling every 2 s (${PAGES / 2} proxied calls/s in the background)`, await measure());
console.log(`  background calls answered: ${background}`);

for (const t of timers) clearInterval(t);
timed.close();
pageAgent.destroy();
await Promise.all([stopChild(consoleProc.child), stopChild(agent.child), stopChild(bare.child)]);
rmSync(dir, { recursive: true, force: true });
process.exit(0);
