#!/usr/bin/env node
// Soak: a console under steady mixed load for a bounded time (default 10 minutes), with its
// resident memory sampled every 10 s. Bound (docs/performance.md): after the first minute of
// warm-up, resident memory grows by no more than 50 MB.
// Usage: node bench/soak.mjs [--minutes M] [--agents N] [--rate R]   (R = check-ins per second)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, fmt, startProcess } from './lib.mjs';

const MINUTES = Number(arg('minutes', '10'));
const AGENTS = Number(arg('agents', '500'));
const RATE = Number(arg('rate', '100'));
const BOUND_MB = 50;

const root = new URL('..', import.meta.url).pathname;
const dist = join(root, 'packages/console/dist/src');
const { loadConfig } = await import(join(dist, 'config.js'));
const { openDatabase } = await import(join(dist, 'db/database.js'));
const { createServices, createBoundaries } = await import(join(dist, 'app.js'));
const { generateToken, hashToken } = await import(join(root, 'packages/protocol/dist/src/index.js'));

const dataDir = mkdtempSync(join(tmpdir(), 'palisade-soak-'));
const env = {
  PALISADE_DATA_DIR: dataDir,
  PALISADE_PORT: '0',
  PALISADE_LOG_LEVEL: 'warn',
  PALISADE_BOOTSTRAP_ADMIN: '0',
};

const config = loadConfig(env);
const database = await openDatabase(config);
const boundaries = createBoundaries(config);
const services = createServices({ db: database.db, config, clock: Date.now, ...boundaries });
await services.catalog.seed();
const account = await services.accounts.create({ email: 'soak@example.com', password: 'soak-password', name: 'Soak' });
await database.db
  .insertInto('catalog_items')
  .values({
    sku: 'soak',
    name: 'Soak',
    description: '',
    price_cents: 0,
    currency: 'USD',
    interval: 'month',
    server_limit: AGENTS,
    features: '[]',
    created_at: Date.now(),
  })
  .execute();
const item = await database.db
  .selectFrom('catalog_items')
  .select('id')
  .where('sku', '=', 'soak')
  .executeTakeFirstOrThrow();
const product = await services.catalog.addProduct(account.id, item.id);
const daemons = [];
for (let i = 0; i < AGENTS; i += 1) {
  const token = generateToken('daemon');
  daemons.push(token);
  await database.db
    .insertInto('servers')
    .values({
      account_id: account.id,
      product_id: product.id,
      name: `soak-${i}`,
      api_url: 'http://10.0.0.1:9100',
      api_key_enc: boundaries.secrets.seal('agk_x'),
      facts: '{}',
      daemon_token_hash: hashToken(token),
      created_at: Date.now(),
    })
    .execute();
}
const tokens = [];
for (let i = 0; i < 40; i += 1) tokens.push((await services.tokens.create(account.id, `soak-${i}`)).token);
boundaries.outbound.close();
await database.close();

const consoleProc = await startProcess([join(dist, 'cli.js')], env);
const base = new URL(consoleProc.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
const rssMb = () => {
  const status = readFileSync(`/proc/${consoleProc.child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
};
const request = (method, path, headers, body) =>
  new Promise((resolve) => {
    const req = http.request({ host: base.hostname, port: base.port, path, method, agent, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });

const statuses = {};
const count = (s) => {
  statuses[s] = (statuses[s] ?? 0) + 1;
};
let n = 0;
let listed = 0;
const tick = setInterval(() => {
  for (let i = 0; i < RATE / 10; i += 1) {
    const id = n++ % AGENTS;
    const body = JSON.stringify({
      agent_version: '0.1.0',
      hostname: `soak-${id}`,
      facts: { cores: 2, mem_total_mb: 4000 },
      sample: {
        ts: Date.now(),
        cpu_pct: n % 100,
        mem_used_mb: 1000,
        mem_total_mb: 4000,
        disk_used_pct: 40,
        load1: 0.5,
        rx_bps: 1,
        tx_bps: 1,
      },
    });
    request(
      'POST',
      '/api/agent/checkin',
      { 'content-type': 'application/json', authorization: `Bearer ${daemons[id]}` },
      body,
    ).then(count);
  }
  for (let i = 0; i < RATE / 20; i += 1) {
    request('GET', '/api/v1/servers', { authorization: `Bearer ${tokens[listed++ % tokens.length]}` }).then(count);
  }
}, 100);

const samples = [];
const started = Date.now();
console.log(`soak: ${MINUTES} min, ${AGENTS} agents, ${RATE} check-ins/s + ${RATE / 2} v1 lists/s; RSS every 10 s`);
await new Promise((resolve) => {
  const sample = setInterval(() => {
    const minute = (Date.now() - started) / 60_000;
    samples.push({ minute, rss: rssMb() });
    process.stdout.write(`  ${fmt(minute, 1)} min  RSS ${fmt(rssMb(), 1)} MB\n`);
    if (minute >= MINUTES) {
      clearInterval(sample);
      resolve();
    }
  }, 10_000);
});
clearInterval(tick);
consoleProc.stop();
agent.destroy();
rmSync(dataDir, { recursive: true, force: true });

const afterWarmup = samples.filter((s) => s.minute >= 1);
const first = afterWarmup[0]?.rss ?? samples[0].rss;
const last = samples.at(-1).rss;
const max = Math.max(...samples.map((s) => s.rss));
console.log(
  `\nRSS after warm-up ${fmt(first)} MB, at the end ${fmt(last)} MB, peak ${fmt(max)} MB; growth ${fmt(last - first)} MB (bound ${BOUND_MB} MB): ${last - first <= BOUND_MB ? 'PASS' : 'ABOVE BOUND'}`,
);
console.log(`answers: ${JSON.stringify(statuses)}`);
process.exit(0);
