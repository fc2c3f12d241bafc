#!/usr/bin/env node
// v1 GET /api/v1/servers (50 servers an account) against a bare node:http server answering the same
// bytes (docs/performance.md, "How the v1 list is measured"): wrk -t1 -c50 pinned to core 0, the
// measured process pinned to core 1, reference and console alternating, 10 s runs after a warm-up.
// Tokens are rotated by a wrk Lua script, enough of them (100 an account) that the 120-a-minute
// limit per token is never reached. Bars: SQLite ≥ 40 % of the reference, PostgreSQL ≥ 25 %.
// Then what a cached answer, a rebuilt one and an invalidation cost, measured in process, and the
// older figure measured with a Node.js client on the same cores (which caps the reference).
// Usage: node bench/v1-servers.mjs [--seconds 10] [--rounds 2] [--postgres URL] [--redis URL] [--only sqlite|postgres]
//   PostgreSQL and Redis default to PALISADE_BENCH_DATABASE_URL / PALISADE_BENCH_REDIS_URL. With
//   both, the console is measured on PostgreSQL alone and on PostgreSQL with Redis (which then
//   counts the rate limits and carries the changes).
import { join } from 'node:path';
import {
  arg,
  benchServerRow,
  benchStore,
  consoleDist,
  cpuSeconds,
  fmt,
  hasWrk,
  load,
  openConsole,
  percentile,
  startPinned,
  stopChild,
  writeTokenRotation,
  wrk,
} from './lib.mjs';

const SECONDS = Number(arg('seconds', '10'));
const ROUNDS = Number(arg('rounds', '2'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);
const REDIS = arg('redis', process.env.PALISADE_BENCH_REDIS_URL);
const ONLY = arg('only', null);
const BARS = { sqlite: 0.4, postgres: 0.25 };

if (!hasWrk()) {
  console.error('wrk is needed (Debian package wrk)');
  process.exit(1);
}

// The reference: node:http answering the console's own answer bytes and API headers, nothing else.
const BARE_SERVER = `
const http = require('node:http');
const body = Buffer.from(process.env.BARE_BODY, 'utf8');
const headers = {
  'content-type': 'application/json; charset=utf-8',
  'cache-control': 'no-store',
  'content-length': body.length,
};
const server = http.createServer((req, res) => {
  res.writeHead(200, headers);
  res.end(body);
});
server.listen(0, '127.0.0.1', () => console.log('bare listening on http://127.0.0.1:' + server.address().port));
process.on('SIGTERM', () => process.exit(0)); // an orderly exit, so --cpu-prof (BENCH_NODE_ARGS) writes its profile
`;

/** Accounts of 50 servers and 100 tokens each: enough tokens for `rps` requests a second under the limit. */
async function prepare(env, rps) {
  const c = await openConsole(env);
  await c.services.catalog.seed();
  const tokens = [];
  const accounts = Math.ceil(rps / 2 / 100); // a token may serve 2 requests a second
  const sealed = c.boundaries.secrets.seal('agk_x');
  for (let a = 0; a < accounts; a += 1) {
    const account = await c.services.accounts.create({
      email: `bench${a}@example.com`,
      password: 'bench-password',
      name: `Bench ${a}`,
    });
    const product = await c.services.catalog.addProduct(account.id, 3);
    const rows = Array.from({ length: 50 }, (_, s) => benchServerRow(account.id, product.id, s, sealed));
    await c.db.insertInto('servers').values(rows).execute();
    for (let t = 0; t < 100; t += 1) tokens.push((await c.services.tokens.create(account.id, `bench-${t}`)).token);
  }
  await c.close();
  return tokens;
}

/** A wrk run, with the CPU time the measured process spent per request (less sensitive to other load than req/s). */
function measured(pid, run) {
  const before = cpuSeconds(pid);
  const result = run();
  return { ...result, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / result.requests };
}

/** wrk against the reference and the console, alternating, each pinned to core 1. */
async function measure(label, store) {
  const dir = store.env.PALISADE_DATA_DIR;
  process.stdout.write(`[${label}] preparing accounts, servers and tokens…\n`);
  const tokens = await prepare(store.env, 30_000);
  const luaFile = writeTokenRotation(join(dir, 'tokens.lua'), tokens);
  const consoleEnv = { ...store.env, PALISADE_PORT: '0', PALISADE_BOOTSTRAP_ADMIN: '0' };
  const console_ = await startPinned([join(consoleDist, 'cli.js')], consoleEnv, '1', join(dir, 'console.log'));
  const url = `${console_.url}/api/v1/servers`;
  const sample = await fetch(url, { headers: { authorization: `Bearer ${tokens[0]}` } });
  const body = await sample.text();
  if (sample.status !== 200) throw new Error(`console answered ${sample.status}: ${body}`);
  await stopChild(console_.child);
  const results = { reference: [], console: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    const bare = await startPinned(['-e', BARE_SERVER], { BARE_BODY: body }, '1', join(dir, 'bare.log'));
    wrk(`${bare.url}/api/v1/servers`, { seconds: 2 }); // warm-up
    results.reference.push(measured(bare.child.pid, () => wrk(`${bare.url}/api/v1/servers`, { seconds: SECONDS })));
    await stopChild(bare.child);
    const running = await startPinned([join(consoleDist, 'cli.js')], consoleEnv, '1', join(dir, 'console.log'));
    const consoleUrl = `${running.url}/api/v1/servers`;
    // Warm-up: each token once (its lookup comes into memory and its last use is recorded, as for a
    // token in steady use), then 2 s of wrk.
    await load({
      url: consoleUrl,
      total: tokens.length,
      concurrency: 32,
      headersFor: (i) => ({ authorization: `Bearer ${tokens[i]}` }),
    });
    wrk(consoleUrl, { luaFile, seconds: 2 });
    results.console.push(measured(running.child.pid, () => wrk(consoleUrl, { luaFile, seconds: SECONDS })));
    await stopChild(running.child);
  }
  // The older figure, kept to compare with earlier runs: the Node.js client of lib.mjs, all unpinned.
  const bare = await startPinned(['-e', BARE_SERVER], { BARE_BODY: body }, null, join(dir, 'bare.log'));
  const running = await startPinned([join(consoleDist, 'cli.js')], consoleEnv, null, join(dir, 'console.log'));
  const headersFor = (i) => ({ authorization: `Bearer ${tokens[i % tokens.length]}` });
  await load({ url: `${bare.url}/api/v1/servers`, total: 1000, concurrency: 32 });
  await load({ url: `${running.url}/api/v1/servers`, total: 1000, concurrency: 32, headersFor });
  const nodeClient = {
    reference: await load({ url: `${bare.url}/api/v1/servers`, total: 20_000, concurrency: 32 }),
    console: await load({ url: `${running.url}/api/v1/servers`, total: 20_000, concurrency: 32, headersFor }),
  };
  await stopChild(bare.child);
  await stopChild(running.child);
  return { label, dialect: store.dialect, bytes: Buffer.byteLength(body), ...results, nodeClient };
}

/**
 * What serving from memory costs, in process: a cached answer, an answer built anew (its entry
 * dropped first), and an invalidation (published and, across processes, echoed back).
 */
async function cacheCosts(label, env, redisUrl) {
  const c = await openConsole(env);
  // Measured as the serving console: on SQLite only other processes' writes wait (services/coherence/).
  c.services.coherence.serve();
  await c.services.catalog.seed();
  const account = await c.services.accounts.create({
    email: `costs-${label.replace(/\W/g, '')}@example.com`,
    password: 'bench-password',
    name: 'C',
  });
  const product = await c.services.catalog.addProduct(account.id, 3);
  const sealed = c.boundaries.secrets.seal('agk_x');
  await c.db
    .insertInto('servers')
    .values(Array.from({ length: 50 }, (_, s) => benchServerRow(account.id, product.id, s, sealed)))
    .execute();
  let redis = null;
  if (redisUrl) {
    const { Redis } = await import('ioredis');
    redis = new Redis(redisUrl);
  }
  await c.services.coherence.listen(redis);
  for (let i = 0; i < 100 && !(await c.services.coherence.ready()); i += 1) await new Promise((r) => setTimeout(r, 20));
  const time = async (n, fn) => {
    const times = [];
    for (let i = 0; i < n; i += 1) {
      const started = process.hrtime.bigint();
      await fn();
      times.push(Number(process.hrtime.bigint() - started) / 1e3);
    }
    times.sort((a, b) => a - b);
    return { p50: percentile(times, 50), p99: percentile(times, 99) };
  };
  const list = () => c.services.servers.listAnswer(account.id);
  await time(500, list);
  const hit = await time(5000, list);
  const miss = await time(1000, async () => {
    await c.services.coherence.changed(account.id);
    return list();
  });
  const invalidation = await time(1000, () => c.services.coherence.changed(account.id));
  await c.services.coherence.close();
  redis?.disconnect();
  await c.close();
  return { label, hit, miss, invalidation };
}

const stores = ONLY === 'postgres' ? [] : [benchStore('v1-sqlite', null)];
if (PG && ONLY !== 'sqlite') stores.push(benchStore('v1-pg', PG));
const figures = [];
for (const store of stores) figures.push(await measure(store.dialect, store));
// PostgreSQL with Redis: the rate limits are counted and the changes carried by Redis.
const withRedis =
  PG && REDIS && ONLY !== 'sqlite'
    ? benchStore('v1-pg-redis', PG, { PALISADE_REDIS_URL: REDIS, PALISADE_REDIS_PREFIX: `bench-wrk-${process.pid}` })
    : null;
if (withRedis) figures.push(await measure('postgres+redis', withRedis));

const costs = [];
for (const store of stores) {
  costs.push(
    await cacheCosts(`${store.dialect}${store.dialect === 'sqlite' ? ' (in process)' : ' (LISTEN/NOTIFY)'}`, store.env),
  );
  if (store.dialect === 'postgres' && REDIS)
    costs.push(
      await cacheCosts(
        'postgres + Redis (pub/sub)',
        { ...store.env, PALISADE_REDIS_URL: REDIS, PALISADE_REDIS_PREFIX: `bench-${process.pid}` },
        REDIS,
      ),
    );
}

console.log(
  `\nv1 GET /api/v1/servers, 50 servers an account: wrk -t1 -c50 -d${SECONDS}s on core 0, the measured process on core 1, ${ROUNDS} alternating rounds`,
);
console.log('target                        req/s   p99 ms   CPU µs/request   non-2xx');
for (const f of figures) {
  for (let round = 0; round < ROUNDS; round += 1) {
    const ref = f.reference[round];
    const con = f.console[round];
    console.log(
      `bare node:http (${f.bytes} B)   ${fmt(ref.rps, 0).padStart(7)} ${fmt(ref.p99ms, 2).padStart(8)} ${fmt(ref.cpuUs, 1).padStart(16)}   ${ref.non2xx}`,
    );
    console.log(
      `console/${f.label.padEnd(20)} ${fmt(con.rps, 0).padStart(7)} ${fmt(con.p99ms, 2).padStart(8)} ${fmt(con.cpuUs, 1).padStart(16)}   ${con.non2xx}`,
    );
    const ratio = con.rps / ref.rps;
    const bar = BARS[f.dialect];
    console.log(
      `ratio console/${f.label} ÷ bare, round ${round + 1} = ${fmt(ratio * 100, 1)}% (bar: ≥ ${bar * 100}%) ${ratio >= bar ? 'PASS' : 'BELOW BAR'}; by CPU per request ${fmt((100 * ref.cpuUs) / con.cpuUs, 1)}%\n`,
    );
  }
}
console.log('The older figure: 20,000 requests from a Node.js client, 32 in flight, nothing pinned');
for (const f of figures) {
  const { reference, console: measured } = f.nodeClient;
  console.log(
    `  ${f.label.padEnd(14)} bare ${fmt(reference.rps, 0)} req/s, console ${fmt(measured.rps, 0)} req/s (p99 ${fmt(measured.p99, 1)} ms, ${JSON.stringify(measured.statuses)}): ${fmt((100 * measured.rps) / reference.rps, 1)}%`,
  );
}
console.log('\nv1 list from memory, in process (µs): p50 / p99');
for (const c of costs) {
  console.log(
    `${c.label.padEnd(30)} cached ${fmt(c.hit.p50, 1)} / ${fmt(c.hit.p99, 1)}   built anew ${fmt(c.miss.p50, 1)} / ${fmt(c.miss.p99, 1)}   invalidation ${fmt(c.invalidation.p50, 1)} / ${fmt(c.invalidation.p99, 1)}   (built anew ÷ cached ${fmt(c.miss.p50 / c.hit.p50, 1)}×)`,
  );
}
for (const store of stores) await store.remove();
await withRedis?.remove();
process.exit(0);
