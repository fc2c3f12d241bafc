#!/usr/bin/env node
// One alert evaluation round over a fleet: N servers with a stored sample each, three fleet-wide
// rules (offline, disk above 90 % for 5 minutes, score below 500) on one account. Figures: a round
// where nothing changes, and a round where every server goes offline (one transition and one
// queued notification per server). See docs/alerts.md, "Timing".
// Usage: node bench/alert-evaluation.mjs [--servers N] [--postgres URL]
import { arg, benchStore, fmt, openConsole } from './lib.mjs';

const SERVERS = Number(arg('servers', '1000'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);

const store = benchStore('alerts', PG);
let now = Date.now();
const bench = await openConsole(store.env, () => now);
const { db, services } = bench;

const account = await db
  .insertInto('accounts')
  .values({
    email: 'alerts-bench@example.com',
    name: 'A',
    password_hash: 'x',
    role: 'user',
    permissions: '[]',
    disabled_at: null,
    created_at: now,
  })
  .returning('id')
  .executeTakeFirstOrThrow();
const product = await services.catalog.seed().then(() => services.catalog.addProduct(account.id, 3));
for (let start = 0; start < SERVERS; start += 500) {
  const servers = [];
  for (let i = start; i < Math.min(SERVERS, start + 500); i += 1) {
    servers.push({
      account_id: account.id,
      product_id: product.id,
      name: `s-${i}`,
      api_url: 'http://10.0.0.5:9100',
      api_key_enc: 'x',
      hostname: null,
      public_ip: null,
      facts: '{}',
      agent_version: '0.1.0',
      daemon_token_hash: null,
      last_seen: now,
      latest_sample: JSON.stringify({ ts: now, attacks_active: 0 }),
      score_base: null,
      score_base_total: 800,
      created_at: now,
    });
  }
  const ids = await db.insertInto('servers').values(servers).returning('id').execute();
  await db
    .insertInto('samples')
    .values(
      ids.map(({ id }) => ({
        server_id: id,
        ts: now,
        resolution: 'raw',
        cpu_pct: 10,
        mem_used_mb: 1000,
        mem_total_mb: 4000,
        disk_used_pct: 50,
        load1: 0.2,
        rx_bps: 0,
        tx_bps: 0,
        extra: '{}',
      })),
    )
    .execute();
}
const channel = await services.alerts.createChannel(account.id, {
  name: 'hook',
  kind: 'webhook',
  url: null,
  email: null,
});
const base = { repeat_minutes: 0, server_ids: null, channel_ids: [channel.id], enabled: true, minutes: 0 };
await services.alerts.createRule(account.id, { ...base, name: 'down', kind: 'offline', metric: null, threshold: null });
await services.alerts.createRule(account.id, {
  ...base,
  name: 'disk',
  kind: 'metric',
  metric: 'disk',
  threshold: 90,
  minutes: 5,
});
await services.alerts.createRule(account.id, { ...base, name: 'score', kind: 'score', metric: null, threshold: 500 });

async function timed(what) {
  const started = performance.now();
  const round = await services.alerts.evaluate();
  const ms = performance.now() - started;
  console.log(`${what}: ${fmt(ms, 0)} ms (${fmt((ms * 1000) / SERVERS, 0)} µs per server) ${JSON.stringify(round)}`);
}
console.log(`${SERVERS} servers, 3 fleet-wide rules, ${PG ? 'PostgreSQL' : 'SQLite'}`);
await timed('a round where nothing changes');
now += 3 * 60_000;
await timed('a round where every server goes offline');
await timed('the next round (all still offline)');

await bench.close();
await store.remove();
