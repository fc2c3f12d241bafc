#!/usr/bin/env node
// Check-in ingest (docs/performance.md, "Check-in ingest and capacity"): sustained check-ins per
// second from AGENTS simulated agents on one console process, pinned to core 1, loaded by wrk
// (-t1, a Lua script that posts each agent's check-in with its own daemon token) pinned to core 0.
// Reference in the same run, on the same core: a bare node:http server that parses the same JSON
// body and answers a constant one. Prints check-ins/s, p50/p99, the console's CPU (per cent of its
// core, and µs per check-in) and the ratio to the reference. Goals, as ratios to the reference of
// the same run: SQLite ≥ 0.30, PostgreSQL ≥ 0.20; and the older bars ≥ 5,000/s and ≥ 3,000/s.
// Usage: node bench/checkin-ingest.mjs [--agents 1000] [--seconds 10] [--connections 64] [--postgres URL] [--dialects sqlite,postgres]
//        [--console-dist DIR] [--cpu-prof DIR]
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  arg,
  benchStore,
  consoleDist,
  cpuSeconds,
  fmt,
  hasWrk,
  openConsole,
  pgBackendCpu,
  pgQuery,
  root,
  startProcess,
  teamOf,
  wrk,
} from './lib.mjs';

const AGENTS = Number(arg('agents', '1000'));
const SECONDS = Number(arg('seconds', '10'));
const CONNECTIONS = Number(arg('connections', '64'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);
const BARS = { sqlite: 5000, postgres: 3000 };
const GOALS = { sqlite: 0.3, postgres: 0.2 };
/** With --console-dist DIR another build of the console is measured (e.g. an earlier commit's, for a before/after). */
const CONSOLE_DIST = resolve(arg('console-dist', consoleDist));
/** With --cpu-prof DIR the console writes a V8 CPU profile there when it stops (for `node --cpu-prof`). */
const PROFILE_DIR = arg('cpu-prof', null);

if (!hasWrk()) {
  console.error('wrk is needed (Debian package wrk)');
  process.exit(1);
}

const { generateToken, hashToken } = await import(join(root, 'packages/protocol/dist/src/index.js'));
const { CompiledQuery } = await import('kysely');

async function prepare(env) {
  const { db, boundaries, services, close } = await openConsole(env, Date.now, CONSOLE_DIST);
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
  const account = teamOf(
    await services.accounts.create({
      email: 'ingest@example.com',
      password: 'bench-password',
      name: 'Ingest',
    }),
  );
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
  // Planner statistics for the tables just filled, as autovacuum would gather them after such
  // inserts: the PostgreSQL these benches share runs with autovacuum off, and without statistics it
  // plans the token lookup and the group's statements for the empty tables it saw at migration.
  if (env.PALISADE_DATABASE_URL) await db.executeQuery(CompiledQuery.raw('ANALYZE accounts, servers, samples'));
  await close();
  return tokens;
}

/**
 * The wrk script: request i is agent (i mod AGENTS)'s check-in, with its daemon token and a sample
 * stamped with wrk's clock (the body the agent sends, packages/protocol/src/checkin.ts).
 */
function luaScript(tokens) {
  return `local tokens = {${tokens.map((t) => `"${t}"`).join(',')}}
local i = 0
request = function()
  i = i + 1
  local a = i % #tokens
  local body = string.format('{"agent_version":"0.1.0","hostname":"agent-%d","public_ip":"203.0.113.9",' ..
    '"facts":{"os":"Debian GNU/Linux 12","kernel":"6.1.0","cores":2,"arch":"x64","mem_total_mb":4000},' ..
    '"sample":{"ts":%.0f,"cpu_pct":%d,"mem_used_mb":1500,"mem_total_mb":4000,"disk_used_pct":55,"load1":0.4,' ..
    '"rx_bps":12000,"tx_bps":8000,"rx_pps":40,"tx_pps":30,"net_errors_ps":0},' ..
    '"protection":{"backend":"monitor"},"alerter":{"webhook_set":false,"queued":0}}',
    a, os.time() * 1000, (a * 7) % 100)
  return wrk.format("POST", nil, { ["content-type"] = "application/json", ["authorization"] = "Bearer " .. tokens[a + 1] }, body)
end
`;
}

/** wrk against `target` (a started process) for SECONDS, with the target's CPU over the run. */
function measure(target, luaFile, seconds = SECONDS) {
  const cpuBefore = cpuSeconds(target.child.pid);
  const result = wrk(`${target.url}/api/agent/checkin`, { luaFile, seconds, connections: CONNECTIONS });
  const cpu = cpuSeconds(target.child.pid) - cpuBefore;
  return { ...result, cpuPct: (100 * cpu) / seconds, cpuUs: (cpu * 1e6) / result.requests };
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
const DIALECTS = arg('dialects', PG ? 'sqlite,postgres' : 'sqlite').split(',');
for (const dialect of DIALECTS) {
  const store = benchStore('ingest', dialect === 'postgres' ? PG : undefined, {
    PALISADE_PORT: '0',
    PALISADE_BOOTSTRAP_ADMIN: '0',
  });
  const env = store.env;
  // The console's PostgreSQL sessions carry a name of their own, so their server processes' CPU is counted too.
  const appName = `palisade-ingest-${process.pid}`;
  if (dialect === 'postgres')
    env.PALISADE_DATABASE_URL = `${PG}${PG.includes('?') ? '&' : '?'}application_name=${appName}`;
  process.stdout.write(`[${dialect}] enrolling ${AGENTS} simulated agents…\n`);
  const tokens = await prepare(env);
  const luaFile = join(env.PALISADE_DATA_DIR, 'checkins.lua');
  writeFileSync(luaFile, luaScript(tokens));
  const bare = await startProcess(['--input-type=module', '-e', BARE], {}, undefined, '1');
  const reference = measure(bare, luaFile);
  bare.stop();
  const profile = PROFILE_DIR ? ['--cpu-prof', '--cpu-prof-dir', PROFILE_DIR] : [];
  const consoleProc = await startProcess([...profile, join(CONSOLE_DIST, 'cli.js')], env, undefined, '1');
  measure(consoleProc, luaFile, 2); // warm-up
  process.stdout.write(`[${dialect}] measuring ${SECONDS} s…\n`);
  const backendsBefore = dialect === 'postgres' ? await pgBackendCpu(PG, appName) : new Map();
  const measured = measure(consoleProc, luaFile);
  if (dialect === 'postgres') {
    const backendsAfter = await pgBackendCpu(PG, appName);
    const cpu = [...backendsAfter].reduce((sum, [pid, s]) => sum + s - (backendsBefore.get(pid) ?? 0), 0);
    measured.pgCpuPct = (100 * cpu) / SECONDS;
    measured.pgCpuUs = (cpu * 1e6) / measured.requests;
  }
  const stored = await countSamples(env);
  consoleProc.stop();
  await new Promise((resolve) => consoleProc.child.on('exit', resolve));
  // Once the console's sessions have ended (each flushes its statistics as it goes).
  if (dialect === 'postgres') measured.serverRows = await serverRowUpdates(PG, env.PALISADE_DATABASE_SCHEMA);
  await store.remove();
  results.push({ dialect, reference, measured, stored });
}

/**
 * The servers table over the whole run (enrolment, warm-up, measurement): its row updates, the share
 * that stayed on their page (HOT: no index entries), dead rows and pages (migration 0032).
 */
async function serverRowUpdates(url, schema) {
  // The sessions' last statistics reach the shared view within a moment of their end.
  let row;
  for (let i = 0; i < 50; i++) {
    [row] = await pgQuery(
      url,
      `SELECT n_tup_upd::bigint AS updates, n_tup_hot_upd::bigint AS hot, n_dead_tup::bigint AS dead,
         (pg_relation_size(relid) / 8192)::bigint AS pages
       FROM pg_stat_user_tables WHERE schemaname = $1 AND relname = 'servers'`,
      [schema],
    );
    if (Number(row?.updates ?? 0) > 0) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return Object.fromEntries(Object.entries(row ?? {}).map(([k, v]) => [k, Number(v)]));
}

/** Raw samples in the store: every acknowledged check-in wrote one. */
async function countSamples(env) {
  const { db, close } = await openConsole(env, Date.now, CONSOLE_DIST);
  const row = await db
    .selectFrom('samples')
    .select((eb) => eb.fn.countAll().as('n'))
    .executeTakeFirstOrThrow();
  await close();
  return Number(row.n);
}

const line = (r) =>
  `${fmt(r.rps, 0)}/s  p50 ${fmt(r.p50ms, 2)} ms  p99 ${fmt(r.p99ms, 2)} ms  CPU ${fmt(r.cpuPct, 0)}% of core 1 (${fmt(r.cpuUs, 0)} µs a request)  non-2xx ${r.non2xx}${r.socketErrors ? `  socket errors: ${r.socketErrors}` : ''}`;
console.log(
  `\nCheck-in ingest: ${AGENTS} agents (each its own daemon token), wrk -t1 -c${CONNECTIONS} -d${SECONDS}s on core 0, one console process on core 1`,
);
for (const { dialect, reference, measured, stored } of results) {
  const bar = BARS[dialect];
  console.log(`bare node:http (parse + constant answer): ${line(reference)}`);
  console.log(`console/${dialect}: ${line(measured)}; ${stored} samples stored`);
  if (measured.pgCpuUs !== undefined) {
    console.log(
      `PostgreSQL server processes of the console's sessions: ${fmt(measured.pgCpuPct, 0)}% of a core (${fmt(measured.pgCpuUs, 0)} µs a check-in)`,
    );
    const rows = measured.serverRows;
    if (rows?.updates)
      console.log(
        `servers table over the run: ${rows.updates} row updates, ${fmt((100 * rows.hot) / rows.updates, 0)}% HOT, ${rows.dead} dead rows, ${rows.pages} pages`,
      );
  }
  const ratio = measured.rps / reference.rps;
  const goal = GOALS[dialect];
  console.log(
    `ratio console/${dialect} ÷ bare = ${fmt(ratio, 2)} (goal: ≥ ${goal}) ${ratio >= goal ? 'PASS' : 'BELOW GOAL'}; by CPU per check-in ${fmt(reference.cpuUs / measured.cpuUs, 2)}; bar ≥ ${bar}/s: ${measured.rps >= bar ? 'PASS' : `BELOW BAR by ${fmt(bar - measured.rps, 0)}/s`}\n`,
  );
}
process.exit(0);
