#!/usr/bin/env node
// Check-in ingest: sustained check-ins per second from 10,000 simulated agents on one console
// process (SQLite by default). Reference in the same run: a bare node:http server that parses the
// same JSON body and answers a constant one. Bar (docs/performance.md): ≥ 2,000 check-ins per second.
// Usage: node bench/checkin-ingest.mjs [--agents N] [--requests N] [--concurrency C] [--postgres URL]
import http from 'node:http';
import { join } from 'node:path';
import { arg, benchStore, consoleDist, fmt, openConsole, percentile, root, startProcess } from './lib.mjs';

const AGENTS = Number(arg('agents', '10000'));
const TOTAL = Number(arg('requests', '30000'));
const CONCURRENCY = Number(arg('concurrency', '64'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);

const { generateToken, hashToken } = await import(join(root, 'packages/protocol/dist/src/index.js'));

async function prepare(env) {
  const { db, boundaries, services, close } = await openConsole(env);
  await services.catalog.seed();
  await db
    .insertInto('catalog_items')
    .values({
      sku: 'bench',
      name: 'Bench',
      description: '',
      price_cents: 0,
      currency: 'USD',
      interval: 'month',
      server_limit: AGENTS,
      features: '[]',
      created_at: Date.now(),
    })
    .execute();
  const item = await db.selectFrom('catalog_items').select('id').where('sku', '=', 'bench').executeTakeFirstOrThrow();
  const account = await services.accounts.create({
    email: 'ingest@example.com',
    password: 'bench-password',
    name: 'Ingest',
  });
  const product = await services.catalog.addProduct(account.id, item.id);
  const tokens = [];
  const sealed = boundaries.secrets.seal('agk_x');
  for (let start = 0; start < AGENTS; start += 500) {
    const rows = [];
    for (let i = start; i < Math.min(AGENTS, start + 500); i += 1) {
      const token = generateToken('daemon');
      tokens.push(token);
      rows.push({
        account_id: account.id,
        product_id: product.id,
        name: `agent-${i}`,
        api_url: `http://10.1.${Math.floor(i / 250)}.${i % 250}:9100`,
        api_key_enc: sealed,
        facts: '{}',
        daemon_token_hash: hashToken(token),
        created_at: Date.now(),
      });
    }
    await db.insertInto('servers').values(rows).execute();
  }
  await close();
  return tokens;
}

function body(i) {
  return JSON.stringify({
    agent_version: '0.1.0',
    hostname: `agent-${i}`,
    public_ip: '203.0.113.9',
    facts: { os: 'Debian GNU/Linux 12', kernel: '6.1.0', cores: 2, arch: 'x64', mem_total_mb: 4000 },
    sample: {
      ts: Date.now(),
      cpu_pct: (i * 7) % 100,
      mem_used_mb: 1500,
      mem_total_mb: 4000,
      disk_used_pct: 55,
      load1: 0.4,
      rx_bps: 12000,
      tx_bps: 8000,
      rx_pps: 40,
      tx_pps: 30,
      net_errors_ps: 0,
    },
    protection: { backend: 'monitor' },
    alerter: { webhook_set: false, queued: 0 },
  });
}

async function post(url, total, tokens) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const latencies = [];
  const statuses = {};
  let next = 0;
  const one = (i) =>
    new Promise((resolve, reject) => {
      const payload = body(i);
      const started = process.hrtime.bigint();
      const req = http.request(
        url,
        {
          method: 'POST',
          agent,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[i % tokens.length]}` },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
            statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
            resolve();
          });
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  const began = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < total) await one(next++);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return { rate: total / seconds, p50: percentile(latencies, 50), p99: percentile(latencies, 99), statuses };
}

const BARE = `
import http from 'node:http';
http.createServer((req, res) => {
  let b = '';
  req.on('data', (d) => { b += d; });
  req.on('end', () => { JSON.parse(b); res.writeHead(200, { 'content-type': 'application/json' }); res.end('{"data":{"interval_s":30,"jobs":[]}}'); });
}).listen(0, '127.0.0.1', function () { console.log('bare listening on http://127.0.0.1:' + this.address().port); });
`;

const results = [];
for (const dialect of PG ? ['sqlite', 'postgres'] : ['sqlite']) {
  const store = benchStore('ingest', dialect === 'postgres' ? PG : undefined, {
    PALISADE_PORT: '0',
    PALISADE_BOOTSTRAP_ADMIN: '0',
  });
  const env = store.env;
  process.stdout.write(`[${dialect}] enrolling ${AGENTS} simulated agents…\n`);
  const tokens = await prepare(env);
  const consoleProc = await startProcess([join(consoleDist, 'cli.js')], env);
  const bare = await startProcess(['--input-type=module', '-e', BARE], {});
  const url = `${consoleProc.url}/api/agent/checkin`;
  await post(url, 1000, tokens);
  process.stdout.write(`[${dialect}] measuring ${TOTAL} check-ins…\n`);
  const reference = await post(`${bare.url}/api/agent/checkin`, TOTAL, tokens);
  const measured = await post(url, TOTAL, tokens);
  consoleProc.stop();
  bare.stop();
  await new Promise((resolve) => consoleProc.child.on('exit', resolve));
  await store.remove();
  results.push({ dialect, reference, measured });
}

console.log(`\nCheck-in ingest: ${AGENTS} agents, ${TOTAL} check-ins, ${CONCURRENCY} in flight, one console process`);
for (const { dialect, reference, measured } of results) {
  console.log(
    `bare node:http (parse + constant answer) ${fmt(reference.rate, 0)}/s  p50 ${fmt(reference.p50, 2)} ms  p99 ${fmt(reference.p99, 2)} ms  ${JSON.stringify(reference.statuses)}`,
  );
  console.log(
    `console/${dialect}: ${fmt(measured.rate, 0)} check-ins/s  p50 ${fmt(measured.p50, 2)} ms  p99 ${fmt(measured.p99, 2)} ms  ${JSON.stringify(measured.statuses)}`,
  );
  console.log(
    `ratio to bare: ${fmt((100 * measured.rate) / reference.rate, 1)}%; bar ≥ 2000/s: ${measured.rate >= 2000 ? 'PASS' : `BELOW BAR by ${fmt(2000 - measured.rate, 0)}/s`}\n`,
  );
}
process.exit(0);
