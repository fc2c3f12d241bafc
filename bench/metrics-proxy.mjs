#!/usr/bin/env node
// Metrics proxy: the latency the console adds over calling the agent's /metrics directly, first
// with nothing else going on, then while N open server pages poll through the console every 2 s.
// Bar (docs/performance.md): ≤ 2 ms added at the median. Usage: node bench/metrics-proxy.mjs [--requests N] [--pages P]
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, fmt, percentile, startProcess, timedGetter } from './lib.mjs';

const REQUESTS = Number(arg('requests', '2000'));
const PAGES = Number(arg('pages', '500'));
const root = new URL('..', import.meta.url).pathname;
const consoleCli = join(root, 'packages/console/dist/src/cli.js');
const agentCli = join(root, 'packages/agent/dist/src/cli.js');

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
const agent = await startProcess(
  [agentCli, 'run', '--config', agentConf, '--state-dir', join(dir, 'agent')],
  {},
  /listening on (https?:\/\/\S+)/,
);
const consoleProc = await startProcess([consoleCli], {
  PALISADE_DATA_DIR: join(dir, 'console'),
  PALISADE_PORT: '0',
  PALISADE_LOG_LEVEL: 'warn',
  PALISADE_BOOTSTRAP_ADMIN: '0',
  PALISADE_ALLOW_PRIVATE_TARGETS: '1',
});

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

const timed = timedGetter();
const get = timed.get;

/** Alternates direct and proxied calls, one at a time, so both see the same machine state. */
async function measure() {
  const direct = [];
  const proxied = [];
  for (let i = 0; i < REQUESTS; i += 1) {
    direct.push(await get(`${agent.url}/metrics`, { authorization: `Bearer ${key}` }));
    proxied.push(await get(`${consoleProc.url}/api/servers/${server.id}/metrics`, { cookie }));
  }
  direct.sort((a, b) => a - b);
  proxied.sort((a, b) => a - b);
  return { direct, proxied };
}

const report = (name, { direct, proxied }) => {
  const added = percentile(proxied, 50) - percentile(direct, 50);
  console.log(`${name}`);
  console.log(
    `  agent directly : median ${fmt(percentile(direct, 50), 3)} ms, p99 ${fmt(percentile(direct, 99), 3)} ms`,
  );
  console.log(
    `  through console: median ${fmt(percentile(proxied, 50), 3)} ms, p99 ${fmt(percentile(proxied, 99), 3)} ms`,
  );
  console.log(
    `  added at the median: ${fmt(added, 3)} ms (bar ≤ 2 ms) ${added <= 2 ? 'PASS' : 'ABOVE BAR'}; ratio ${fmt(percentile(proxied, 50) / percentile(direct, 50), 2)}×`,
  );
};

await measure(); // warm-up
report(`idle, ${REQUESTS} calls each`, await measure());

// N open pages, each polling every 2 s, spread evenly over the 2 s.
const pageAgent = new http.Agent({ keepAlive: true, maxSockets: 64 });
let background = 0;
const timers = [];
for (let p = 0; p < PAGES; p += 1) {
  setTimeout(
    () => {
      timers.push(
        setInterval(() => {
          http
            .get(
              `${consoleProc.url}/api/servers/${server.id}/metrics`,
              { agent: pageAgent, headers: { cookie } },
              (res) => {
                res.resume();
                background += 1;
              },
            )
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
consoleProc.stop();
agent.stop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
