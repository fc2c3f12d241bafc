#!/usr/bin/env node
// Notification delivery while other endpoints misbehave: a real console process works the outbox;
// this process queues notifications in its database and runs the receivers. Figures: time from
// queueing to arrival at a healthy endpoint (1) unloaded, (2) while 100 other accounts' endpoints
// accept and never answer, (3) with 100,000 more rows queued and due for 1,000 accounts whose
// endpoints hang (and as many parked); with the ratios to (1). Also the pick-up query's time alone
// (bench/lib.mjs opens the console's database in process). See docs/performance.md.
// Usage: node bench/notification-delivery.mjs [--rows N] [--hanging N] [--samples N] [--postgres URL]
import http from 'node:http';
import { join } from 'node:path';
import { arg, benchStore, consoleDist, fmt, openConsole, percentile, startProcess } from './lib.mjs';

const ROWS = Number(arg('rows', '100000'));
const HANGING = Number(arg('hanging', '100'));
const SAMPLES = Number(arg('samples', '10'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);
const { deliveryCandidates } = await import(join(consoleDist, 'repositories/notifications.repository.js'));

const listen = (server) =>
  new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${server.address().port}/hook`)),
  );

// The healthy receiver notes when each delivery id arrives.
const arrivals = new Map();
const waiting = new Map();
const healthy = http.createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const id = String(req.headers['x-palisade-delivery']);
    arrivals.set(id, performance.now());
    res.writeHead(204).end();
    waiting.get(id)?.();
  });
});
const healthyUrl = await listen(healthy);
// Hanging receivers accept the request and never answer.
let hangingRequests = 0;
const hangingServers = [];
const hangingUrls = [];
for (let i = 0; i < HANGING; i += 1) {
  const server = http.createServer((req) => {
    req.resume();
    hangingRequests += 1;
  });
  hangingServers.push(server);
  hangingUrls.push(await listen(server));
}

const store = benchStore('notify', PG, { PALISADE_ALLOW_PRIVATE_TARGETS: '1', PALISADE_BOOTSTRAP_ADMIN: '0' });
const env = store.env;
const bench = await openConsole(env);
const { db, services } = bench;

let accounts = 0;
/** An account (inserted directly: nobody signs in) with its webhook set through the service. */
async function account(url) {
  accounts += 1;
  const a = await db
    .insertInto('accounts')
    .values({
      email: `notify-${accounts}@example.com`,
      name: `N${accounts}`,
      password_hash: 'x',
      role: 'user',
      permissions: '[]',
      disabled_at: null,
      created_at: Date.now(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await services.notifications.setWebhook(a.id, url);
  return a.id;
}
const row = (accountId, n, status = 'queued') => ({
  account_id: accountId,
  kind: 'ticket.reply',
  payload: JSON.stringify({ kind: 'ticket.reply', title: `bench ${n}`, body: 'b', ticket_ref: 'T-BENCH0' }),
  status,
  attempts: 0,
  next_attempt_at: Date.now(),
  locked_until: 0,
  created_at: Date.now(),
  delivered_at: null,
});
async function queueMany(accountIds, total, status = 'queued') {
  for (let start = 0; start < total; start += 1000) {
    const rows = [];
    for (let i = start; i < Math.min(total, start + 1000); i += 1)
      rows.push(row(accountIds[i % accountIds.length], i, status));
    await db.insertInto('notifications').values(rows).execute();
  }
}

const healthyAccount = await account(healthyUrl);
/** Queues one notification for the healthy endpoint and answers the ms until it arrived. */
async function timeOne(n) {
  const started = performance.now();
  const { id } = await db
    .insertInto('notifications')
    .values(row(healthyAccount, n))
    .returning('id')
    .executeTakeFirstOrThrow();
  await new Promise((resolve) => {
    if (arrivals.has(String(id))) resolve();
    else waiting.set(String(id), resolve);
  });
  return arrivals.get(String(id)) - started;
}
async function phase(name) {
  const times = [];
  for (let i = 0; i < SAMPLES; i += 1) {
    // A random gap, so samples fall anywhere in the worker's one-second poll.
    await new Promise((r) => setTimeout(r, Math.random() * 1000));
    times.push(await timeOne(i));
  }
  const sorted = [...times].sort((a, b) => a - b);
  const result = { name, first: times[0], p50: percentile(sorted, 50), max: sorted.at(-1) };
  console.log(`  (${name}: median ${fmt(result.p50, 0)} ms)`);
  return result;
}

/** One round's pick-up query (what the worker runs before each batch of deliveries), median of 5. */
async function pickUp() {
  const runs = [];
  for (let i = 0; i < 5; i += 1) {
    const started = performance.now();
    await deliveryCandidates(db, { now: Date.now(), perEndpoint: 2, limit: 64, skipEndpoints: [] });
    runs.push(performance.now() - started);
  }
  const ms = percentile(
    runs.sort((a, b) => a - b),
    50,
  );
  console.log(`  (pick-up query: median ${fmt(ms, 1)} ms)`);
  return ms;
}
const pickUps = [];

const consoleProc = await startProcess([join(consoleDist, 'cli.js')], { ...env, PALISADE_PORT: '0' });
const results = [];
try {
  results.push(await phase('unloaded'));
  pickUps.push(['unloaded', await pickUp()]);

  const hangingAccounts = [];
  for (const url of hangingUrls) hangingAccounts.push(await account(url));
  await queueMany(hangingAccounts, HANGING * 5);
  while (hangingRequests < HANGING) await new Promise((r) => setTimeout(r, 50)); // every one is hanging now
  results.push(await phase(`${HANGING} endpoints hanging`));

  const many = [];
  for (let i = 0; i < 1000; i += 1) many.push(await account(hangingUrls[i % hangingUrls.length]));
  const began = performance.now();
  await queueMany(many, ROWS);
  await queueMany(many, ROWS, 'parked');
  const queuedIn = performance.now() - began;
  pickUps.push([`${ROWS} due for 1,000 hanging endpoints, ${ROWS} parked`, await pickUp()]);
  const due = await db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll().as('n'))
    .where('status', '=', 'queued')
    .executeTakeFirstOrThrow();
  results.push(await phase(`${ROWS.toLocaleString('en')} rows queued (${Number(due.n).toLocaleString('en')} due)`));
  console.log(
    `(queued ${2 * ROWS} rows in ${fmt(queuedIn / 1000)} s; ${hangingRequests} requests to hanging endpoints so far)`,
  );
} finally {
  consoleProc.stop();
  await new Promise((resolve) => consoleProc.child.on('exit', resolve));
  await bench.close();
  await store.remove();
  healthy.closeAllConnections();
  healthy.close();
  for (const s of hangingServers) {
    s.closeAllConnections();
    s.close();
  }
}

const base = results[0].p50;
console.log(
  `notification delivery to a healthy endpoint (${PG ? 'PostgreSQL' : 'SQLite'}), ${SAMPLES} deliveries each:`,
);
for (const r of results) {
  console.log(
    `  ${r.name.padEnd(44)} first ${fmt(r.first, 0).padStart(6)} ms  median ${fmt(r.p50, 0).padStart(6)} ms  max ${fmt(r.max, 0).padStart(6)} ms  (median ×${fmt(r.p50 / base)})`,
  );
}
for (const [what, ms] of pickUps) console.log(`  pick-up query, ${what.padEnd(50)} ${fmt(ms, 1).padStart(7)} ms`);
