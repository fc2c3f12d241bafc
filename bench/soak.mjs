#!/usr/bin/env node
// Soak (docs/performance.md, "Check-in ingest and capacity"): one console process (pinned to core 1)
// under a steady check-in rate from AGENTS agents plus v1 server lists spread over TOKENS live
// personal access tokens (each polls in turn), for a bounded time (default 10 minutes), its resident memory sampled every 10 s. The generator is this process, pinned to
// core 0: open-loop at a fixed rate (wrk keeps a fixed number of connections busy instead, and wrk2
// is not packaged here). Then, still under load, the console is killed with SIGKILL and restarted:
// every check-in it had acknowledged (2xx) must be in the database.
// Bounds: after the first minute of warm-up, RSS grows by no more than 50 MB; no error answers.
// Usage: node bench/soak.mjs [--minutes 10] [--agents 1000] [--rate 3000] [--lists 50] [--tokens 3000] [--postgres URL]
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { arg, benchStore, consoleDist, fmt, openConsole, root, startProcess, teamOf } from './lib.mjs';

const MINUTES = Number(arg('minutes', '10'));
const AGENTS = Number(arg('agents', '1000'));
const RATE = Number(arg('rate', '3000'));
const LISTS = Number(arg('lists', '50'));
const TOKENS = Number(arg('tokens', '3000'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);
const BOUND_MB = 50;

spawnSync('taskset', ['-pc', '0', String(process.pid)]); // the generator on core 0, the console on core 1
const { generateToken, hashToken } = await import(join(root, 'packages/protocol/dist/src/index.js'));

const store = benchStore('soak', PG, { PALISADE_PORT: '0', PALISADE_BOOTSTRAP_ADMIN: '0' });
// The console's own /metrics on a listener of its own: the V8 heap in use, beside the RSS read from /proc.
const METRICS_PORT = 20_000 + (process.pid % 20_000);
const env = { ...store.env, PALISADE_METRICS_ADDR: `127.0.0.1:${METRICS_PORT}` };

/**
 * AGENTS servers with daemon tokens and TOKENS API tokens, used in turn (at 50 lists/s, each of
 * 3,000 once a minute: far below its 120), over as many accounts as the 100-tokens-an-account
 * limit needs, the servers dealt out among them.
 */
async function prepare() {
  const { db, boundaries, services, close } = await openConsole(env);
  await services.catalog.seed();
  const accounts = [];
  for (let a = 0; a < Math.max(1, Math.ceil(TOKENS / 100)); a += 1)
    accounts.push(
      teamOf(
        await services.accounts.create({ email: `soak-${a}@example.com`, password: 'soak-password', name: `S${a}` }),
      ),
    );
  await db
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
  const item = await db.selectFrom('catalog_items').select('id').where('sku', '=', 'soak').executeTakeFirstOrThrow();
  const products = [];
  for (const account of accounts) products.push(await services.catalog.addProduct(account.id, item.id));
  const sealed = boundaries.secrets.seal('agk_x');
  const daemons = [];
  for (let start = 0; start < AGENTS; start += 500) {
    const batch = [];
    for (let i = start; i < Math.min(AGENTS, start + 500); i += 1) batch.push({ i, token: generateToken('daemon') });
    const ids = await db
      .insertInto('servers')
      .values(
        batch.map(({ i, token }) => ({
          account_id: accounts[i % accounts.length].id,
          product_id: products[i % accounts.length].id,
          name: `soak-${i}`,
          api_url: 'http://10.0.0.1:9100',
          api_key_enc: sealed,
          facts: '{}',
          daemon_token_hash: hashToken(token),
          created_at: Date.now(),
        })),
      )
      .returning('id')
      .execute();
    for (const [j, r] of ids.entries()) daemons.push({ id: Number(r.id), token: batch[j].token, lastTs: 0 });
  }
  const tokens = [];
  for (let i = 0; i < TOKENS; i += 1)
    tokens.push(
      (
        await services.tokens.create(
          accounts[i % accounts.length].id,
          accounts[i % accounts.length].personId,
          `soak-${i}`,
        )
      ).token,
    );
  await close();
  return { daemons, tokens };
}

const { daemons, tokens } = await prepare();
let consoleProc = await startProcess([join(consoleDist, 'cli.js')], env, undefined, '1');
let base = new URL(consoleProc.url);
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const rssMb = () => {
  const status = readFileSync(`/proc/${consoleProc.child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
};
/** `nodejs_heap_used_bytes` of the console's /metrics in MB, or NaN when it did not answer. */
const heapMb = async () => {
  try {
    const text = await (await fetch(`http://127.0.0.1:${METRICS_PORT}/metrics`)).text();
    return Number(/^nodejs_heap_used_bytes(?:\{[^}]*\})? (\S+)$/m.exec(text)?.[1]) / 2 ** 20;
  } catch {
    return Number.NaN;
  }
};
/** Resolves with the HTTP status, or 0 when the request failed (connection refused or reset). */
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
let acknowledged = 0;
/** Check-ins acknowledged since `recording` was set: checked one by one after the SIGKILL. */
let recording = null;
let n = 0;
let listed = 0;
/** Requests sent and not yet answered; past MAX_IN_FLIGHT the generator skips (and counts) rather than queue without end. */
let inFlight = 0;
let skipped = 0;
const MAX_IN_FLIGHT = 256;
function checkIn() {
  if (inFlight >= MAX_IN_FLIGHT) {
    skipped += 1;
    return;
  }
  inFlight += 1;
  const server = daemons[n++ % daemons.length];
  const ts = Math.max(Date.now(), server.lastTs + 1); // each check-in of a server has its own sample time
  server.lastTs = ts;
  const body = JSON.stringify({
    agent_version: '0.1.0',
    hostname: `soak-${server.id}`,
    facts: { cores: 2, mem_total_mb: 4000 },
    sample: {
      ts,
      cpu_pct: n % 100,
      mem_used_mb: 1000,
      mem_total_mb: 4000,
      disk_used_pct: 40,
      load1: 0.5,
      rx_bps: 1,
      tx_bps: 1,
    },
  });
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${server.token}` };
  request('POST', '/api/agent/checkin', headers, body).then((status) => {
    inFlight -= 1;
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status !== 200) return;
    acknowledged += 1;
    recording?.push({ serverId: server.id, ts });
  });
}
// Open loop: every 10 ms, the check-ins and lists due by now (so a slow answer does not slow the rate).
const began = performance.now();
let sentCheckins = 0;
let sentLists = 0;
const tick = setInterval(() => {
  const elapsed = (performance.now() - began) / 1000;
  while (sentCheckins < elapsed * RATE) {
    sentCheckins += 1;
    checkIn();
  }
  while (sentLists < elapsed * LISTS) {
    sentLists += 1;
    request('GET', '/api/v1/servers', { authorization: `Bearer ${tokens[listed++ % tokens.length]}` }).then((s) => {
      statuses[`list ${s}`] = (statuses[`list ${s}`] ?? 0) + 1;
    });
  }
}, 10);

const samples = [];
const started = Date.now();
console.log(
  `soak (${store.dialect}): ${MINUTES} min, ${AGENTS} agents, ${RATE} check-ins/s + ${LISTS} v1 lists/s from ${tokens.length} tokens; RSS every 10 s`,
);
await new Promise((resolve) => {
  const sample = setInterval(async () => {
    const minute = (Date.now() - started) / 60_000;
    samples.push({ minute, rss: rssMb(), heap: await heapMb() });
    process.stdout.write(
      `  ${fmt(minute, 1)} min  RSS ${fmt(samples.at(-1).rss, 1)} MB  heap in use ${fmt(samples.at(-1).heap, 1)} MB  acknowledged ${acknowledged}  skipped ${skipped}  ${JSON.stringify(statuses)}\n`,
    );
    if (minute >= MINUTES) {
      clearInterval(sample);
      resolve();
    }
  }, 10_000);
});
const beforeKill = { ...statuses };
const acknowledgedBeforeKill = acknowledged;
const sentBeforeKill = sentCheckins - skipped;
const skippedBeforeKill = skipped;

// SIGKILL under load: record what is acknowledged for a few seconds, kill, then restart and look.
recording = [];
await new Promise((r) => setTimeout(r, 3000));
const exited = new Promise((r) => consoleProc.child.once('exit', r));
consoleProc.child.kill('SIGKILL');
await exited;
const checked = recording;
recording = null;
clearInterval(tick);
await new Promise((r) => setTimeout(r, 1000)); // requests in flight fail (status 0)
agent.destroy();
consoleProc = await startProcess([join(consoleDist, 'cli.js')], env, undefined, '1');
base = new URL(consoleProc.url);
const { db, close } = await openConsole(env);
const stored = new Set();
for (let i = 0; i < checked.length; i += 1000) {
  const part = checked.slice(i, i + 1000);
  const rows = await db
    .selectFrom('samples')
    .select(['server_id', 'ts'])
    .where('resolution', '=', 'raw')
    .where('server_id', 'in', [...new Set(part.map((c) => c.serverId))])
    .where('ts', 'in', [...new Set(part.map((c) => c.ts))])
    .execute();
  for (const r of rows) stored.add(`${Number(r.server_id)}:${Number(r.ts)}`);
}
const lost = checked.filter((c) => !stored.has(`${c.serverId}:${c.ts}`)).length;
const total = Number(
  (
    await db
      .selectFrom('samples')
      .select((eb) => eb.fn.countAll().as('n'))
      .executeTakeFirstOrThrow()
  ).n,
);
await close();
consoleProc.stop();
await new Promise((r) => consoleProc.child.once('exit', r));
await store.remove();

const afterWarmup = samples.filter((s) => s.minute >= 1);
const first = afterWarmup[0]?.rss ?? samples[0].rss;
const last = samples.at(-1).rss;
const max = Math.max(...samples.map((s) => s.rss));
const errors = Object.entries(beforeKill)
  .filter(([status]) => !['200', 'list 200'].includes(status))
  .reduce((a, [, count]) => a + count, 0);
const minutes = samples.at(-1).minute;
const firstHeap = afterWarmup[0]?.heap ?? samples[0].heap;
console.log(
  `V8 heap in use after warm-up ${fmt(firstHeap)} MB, at the end ${fmt(samples.at(-1).heap)} MB, ` +
    `peak ${fmt(Math.max(...samples.map((s) => s.heap)))} MB (the rest of RSS is V8's spaces sized to the allocation rate, code, buffers)`,
);
console.log(
  `\nRSS after warm-up ${fmt(first)} MB, at the end ${fmt(last)} MB, peak ${fmt(max)} MB; growth ${fmt(last - first)} MB (bound ${BOUND_MB} MB): ${last - first <= BOUND_MB ? 'PASS' : 'ABOVE BOUND'}`,
);
console.log(
  `check-ins: ${sentBeforeKill} sent (${skippedBeforeKill} not sent: ${MAX_IN_FLIGHT} already in flight), ${acknowledgedBeforeKill} acknowledged in ${fmt(minutes, 1)} min (${fmt(acknowledgedBeforeKill / (minutes * 60), 0)}/s); answers before the kill ${JSON.stringify(beforeKill)}; errors: ${errors} ${errors === 0 ? 'PASS' : 'FAIL'}`,
);
console.log(
  `SIGKILL under load: ${checked.length} check-ins acknowledged in its last 3 s, ${lost} of them missing after restart: ${lost === 0 ? 'PASS' : 'FAIL'}; ${total} samples stored for ${acknowledged} acknowledged in all`,
);
process.exit(0);
