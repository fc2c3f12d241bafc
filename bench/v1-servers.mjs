#!/usr/bin/env node
// v1 GET /api/v1/servers (50 servers an account) against a bare node:http server answering the same
// bytes (docs/performance.md, "How the v1 list is measured"): wrk -t1 -c50 pinned to core 0, the
// measured process pinned to core 1, reference and console alternating, 10 s runs after a warm-up.
// Tokens are rotated by a wrk Lua script: by default 3,000 distinct tokens over 30 accounts in each
// round (--tokens, --accounts), a fresh set a round so no round inherits another's rate-limit
// windows (120 a minute a token: past that the answers are 429s and the round says so). Goals:
// SQLite ≥ 50 % of the reference, PostgreSQL ≥ 35 % (docs/performance.md).
// Then what a cached answer, a rebuilt one and an invalidation cost, measured in process, and the
// older figure measured with a Node.js client on the same cores (which caps the reference).
// Usage: node bench/v1-servers.mjs [--seconds 10] [--rounds 2] [--tokens 3000] [--accounts 30] [--postgres URL] [--redis URL] [--only sqlite|postgres] [--console-dist DIR]
//   PostgreSQL and Redis default to PALISADE_BENCH_DATABASE_URL / PALISADE_BENCH_REDIS_URL. With
//   both, the console is measured on PostgreSQL alone and on PostgreSQL with Redis (which then
//   counts the rate limits and carries the changes).
import { join, resolve } from 'node:path';
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
  pgQuery,
  startPinned,
  stopChild,
  teamOf,
  writeTokenRotation,
  wrk,
} from './lib.mjs';

const SECONDS = Number(arg('seconds', '10'));
const ROUNDS = Number(arg('rounds', '2'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);
const REDIS = arg('redis', process.env.PALISADE_BENCH_REDIS_URL);
const ONLY = arg('only', null);
const TOKENS = Number(arg('tokens', '3000'));
const ACCOUNTS = Number(arg('accounts', '30'));
const BARS = { sqlite: 0.5, postgres: 0.35 };
/** With --console-dist DIR another build of the console is measured (e.g. an earlier commit's, for a before/after). */
const CONSOLE_DIST = resolve(arg('console-dist', consoleDist));
if (TOKENS / ACCOUNTS > 100) {
  console.error('at most 100 tokens an account: raise --accounts');
  process.exit(1);
}

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

/**
 * For each round, ACCOUNTS accounts of 50 servers sharing TOKENS tokens (every token distinct);
 * answers the rounds' token lists.
 */
async function prepare(env) {
  const c = await openConsole(env, Date.now, CONSOLE_DIST);
  await c.services.catalog.seed();
  const rounds = [];
  const sealed = c.boundaries.secrets.seal('agk_x');
  const perAccount = Math.ceil(TOKENS / ACCOUNTS);
  for (let a = 0; a < ACCOUNTS * ROUNDS; a += 1) {
    if (a % ACCOUNTS === 0) rounds.push([]);
    const tokens = rounds.at(-1);
    const account = teamOf(
      await c.services.accounts.create({
        email: `bench${a}@example.com`,
        password: 'bench-password',
        name: `Bench ${a}`,
      }),
    );
    const product = await c.services.catalog.addProduct(account.id, 3);
    const rows = Array.from({ length: 50 }, (_, s) => benchServerRow(account.id, product.id, s, sealed));
    await c.db.insertInto('servers').values(rows).execute();
    for (let t = 0; t < perAccount && tokens.length < TOKENS; t += 1)
      tokens.push((await c.services.tokens.create(account.id, account.personId, `bench-${t}`)).token);
  }
  await c.close();
  return rounds;
}

/** A wrk run, with the CPU time the measured process spent per request (less sensitive to other load than req/s). */
function measured(pid, run) {
  const before = cpuSeconds(pid);
  const result = run();
  return { ...result, cpuUs: ((cpuSeconds(pid) - before) * 1e6) / result.requests };
}

/**
 * On PostgreSQL, what the database did: transactions committed in the whole database (alone on it,
 * a dedicated database, these are the console's statements: each is its own transaction) and the
 * rate-limit table's rows, updates and size in the bench's schema.
 */
async function pgCounters(store) {
  if (store.dialect !== 'postgres') return null;
  const rows = await pgQuery(
    store.env.PALISADE_DATABASE_URL,
    `select (select xact_commit from pg_stat_database where datname = current_database())::bigint as xacts,
       coalesce(t.n_tup_upd, 0)::bigint as updates, coalesce(t.n_tup_hot_upd, 0)::bigint as hot,
       coalesce(t.n_live_tup, 0)::bigint as live, coalesce(t.n_dead_tup, 0)::bigint as dead,
       coalesce(pg_total_relation_size(t.relid), 0)::bigint as bytes
     from (select 1) one left join pg_stat_user_tables t on t.schemaname = $1 and t.relname = 'rate_limit_windows'`,
    [store.env.PALISADE_DATABASE_SCHEMA],
  );
  return Object.fromEntries(Object.entries(rows[0]).map(([k, v]) => [k, Number(v)]));
}

/** wrk against the reference and the console, alternating, each pinned to core 1. */
async function measure(label, store) {
  const dir = store.env.PALISADE_DATA_DIR;
  process.stdout.write(`[${label}] preparing accounts, servers and tokens…\n`);
  const rounds = await prepare(store.env);
  const tokens = rounds.flat();
  const consoleEnv = { ...store.env, PALISADE_PORT: '0', PALISADE_BOOTSTRAP_ADMIN: '0' };
  const console_ = await startPinned([join(CONSOLE_DIST, 'cli.js')], consoleEnv, '1', join(dir, 'console.log'));
  const url = `${console_.url}/api/v1/servers`;
  const sample = await fetch(url, { headers: { authorization: `Bearer ${tokens[0]}` } });
  const body = await sample.text();
  if (sample.status !== 200) throw new Error(`console answered ${sample.status}: ${body}`);
  await stopChild(console_.child);
  const results = { reference: [], console: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    const roundTokens = rounds[round];
    const luaFile = writeTokenRotation(join(dir, `tokens-${round}.lua`), roundTokens);
    const bare = await startPinned(['-e', BARE_SERVER], { BARE_BODY: body }, '1', join(dir, 'bare.log'));
    // The same requests as the console's, by the same script: the load generator costs the same.
    wrk(`${bare.url}/api/v1/servers`, { luaFile, seconds: 2 }); // warm-up
    results.reference.push(
      measured(bare.child.pid, () => wrk(`${bare.url}/api/v1/servers`, { luaFile, seconds: SECONDS })),
    );
    await stopChild(bare.child);
    const running = await startPinned([join(CONSOLE_DIST, 'cli.js')], consoleEnv, '1', join(dir, 'console.log'));
    const consoleUrl = `${running.url}/api/v1/servers`;
    // Warm-up: each token once (its lookup comes into memory and its last use is recorded, as for a
    // token in steady use), then 2 s of wrk.
    await load({
      url: consoleUrl,
      total: roundTokens.length,
      concurrency: 32,
      headersFor: (i) => ({ authorization: `Bearer ${roundTokens[i]}` }),
    });
    wrk(consoleUrl, { luaFile, seconds: 2 });
    const pgBefore = await pgCounters(store);
    const run = measured(running.child.pid, () => wrk(consoleUrl, { luaFile, seconds: SECONDS }));
    // The statistics collector publishes a session's counts within a second or so of its last transaction.
    if (pgBefore) await new Promise((r) => setTimeout(r, 1500));
    const pgAfter = await pgCounters(store);
    if (pgAfter)
      run.pg = {
        xactsPerRequest: (pgAfter.xacts - pgBefore.xacts) / run.requests,
        rateLimitUpdates: pgAfter.updates - pgBefore.updates,
        hotShare: (pgAfter.hot - pgBefore.hot) / Math.max(1, pgAfter.updates - pgBefore.updates),
        rateLimitRows: pgAfter.live,
        rateLimitDead: pgAfter.dead,
        rateLimitBytes: pgAfter.bytes,
      };
    results.console.push(run);
    await stopChild(running.child);
  }
  // The older figure, kept to compare with earlier runs: the Node.js client of lib.mjs, all unpinned.
  const bare = await startPinned(['-e', BARE_SERVER], { BARE_BODY: body }, null, join(dir, 'bare.log'));
  const running = await startPinned([join(CONSOLE_DIST, 'cli.js')], consoleEnv, null, join(dir, 'console.log'));
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
  const c = await openConsole(env, Date.now, CONSOLE_DIST);
  // Measured as the serving console: on SQLite only other processes' writes wait (services/coherence/).
  c.services.coherence.serve();
  await c.services.catalog.seed();
  const account = teamOf(
    await c.services.accounts.create({
      email: `costs-${label.replace(/\W/g, '')}@example.com`,
      password: 'bench-password',
      name: 'C',
    }),
  );
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
  `\nv1 GET /api/v1/servers, 50 servers an account, ${TOKENS} distinct tokens over ${ACCOUNTS} accounts a round: wrk -t1 -c50 -d${SECONDS}s on core 0, the measured process on core 1, ${ROUNDS} alternating rounds`,
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
    if (con.pg)
      console.log(
        `  PostgreSQL: ${fmt(con.pg.xactsPerRequest, 3)} transactions a request (whole database); rate_limit_windows: ${fmt(con.pg.rateLimitUpdates / con.requests, 2)} row updates a request (${fmt(100 * con.pg.hotShare, 0)}% HOT), ${con.pg.rateLimitRows} rows live, ${con.pg.rateLimitDead} dead, ${fmt(con.pg.rateLimitBytes / 1024, 0)} KiB`,
      );
    // A 429 is cheaper than a list: a round past the tokens' limits does not count.
    const verdict =
      con.non2xx > 0 ? 'NOT VALID (non-2xx answers: raise --tokens)' : ratio >= bar ? 'PASS' : 'BELOW GOAL';
    console.log(
      `ratio console/${f.label} ÷ bare, round ${round + 1} = ${fmt(ratio, 2)} (goal: ≥ ${bar}) ${verdict}; by CPU per request ${fmt(ref.cpuUs / con.cpuUs, 2)}\n`,
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
