#!/usr/bin/env node
// What a stored sample costs on disk (docs/performance.md, "Check-in ingest and capacity"): ROWS raw
// samples as check-ins store them (the agent's figures, its extra keys as JSON), in SQLite and with
// --postgres in PostgreSQL, table and indexes together; then the rows a server keeps at steady
// state under the default retention, and what that costs a fleet.
// Usage: node bench/sample-storage.mjs [--rows 200000] [--postgres URL]
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { arg, benchStore, fmt, openConsole, teamOf } from './lib.mjs';

const ROWS = Number(arg('rows', '200000'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);
const { sql } = await import('kysely');

/** Rows a server keeps at a 30 s check-in interval under the default retention (config.ts). */
function rowsPerServer({ rawHours = 24, fiveMinuteDays = 7, hourlyDays = 90 } = {}) {
  const raw = (rawHours * 3600) / 30;
  const fiveMinute = ((fiveMinuteDays * 24 - rawHours) * 60) / 5;
  const hourly = hourlyDays * 24 - fiveMinuteDays * 24;
  return { raw, fiveMinute, hourly, total: raw + fiveMinute + hourly };
}

async function measure(dialect) {
  const store = benchStore('samples', dialect === 'postgres' ? PG : undefined, { PALISADE_BOOTSTRAP_ADMIN: '0' });
  const { db, boundaries, services, close } = await openConsole(store.env);
  await services.catalog.seed();
  const account = teamOf(
    await services.accounts.create({ email: 's@example.com', password: 'bench-password', name: 'S' }),
  );
  const product = await services.catalog.addProduct(account.id, 3);
  const servers = [];
  for (let s = 0; s < 100; s += 1) {
    const row = await db
      .insertInto('servers')
      .values({
        account_id: account.id,
        product_id: product.id,
        name: `s-${s}`,
        api_url: 'http://10.0.0.1:9100',
        api_key_enc: boundaries.secrets.seal('agk_x'),
        facts: '{}',
        created_at: Date.now(),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    servers.push(Number(row.id));
  }
  const sizeBefore = await size(db, dialect, store.env);
  const start = Date.now() - ROWS * 300;
  for (let i = 0; i < ROWS; i += 500) {
    await db
      .insertInto('samples')
      .values(
        Array.from({ length: Math.min(500, ROWS - i) }, (_, j) => {
          const n = i + j;
          return {
            server_id: servers[n % servers.length],
            ts: start + n * 300,
            resolution: 'raw',
            cpu_pct: (n * 7) % 100,
            mem_used_mb: 1500 + (n % 300),
            mem_total_mb: 4000,
            disk_used_pct: 55.5,
            load1: 0.42,
            rx_bps: 12000 + n,
            tx_bps: 8000 + n,
            extra: JSON.stringify({ rx_pps: 40, tx_pps: 30, net_errors_ps: 0, disk_mount: '/', attacks_active: 0 }),
          };
        }),
      )
      .execute();
  }
  const sizeAfter = await size(db, dialect, store.env);
  await close();
  await store.remove();
  return (sizeAfter - sizeBefore) / ROWS;
}

/** Bytes the samples table and its indexes take (PostgreSQL), or the database file with its WAL checkpointed (SQLite). */
async function size(db, dialect, env) {
  if (dialect === 'postgres') {
    await sql`VACUUM ANALYZE samples`.execute(db);
    const row = await sql`SELECT pg_total_relation_size('samples') AS bytes`.execute(db);
    return Number(row.rows[0].bytes);
  }
  await sql`PRAGMA wal_checkpoint(TRUNCATE)`.execute(db);
  return statSync(join(env.PALISADE_DATA_DIR, 'console.db')).size;
}

const perServer = rowsPerServer();
console.log(
  `rows a server keeps (30 s interval, default retention): ${perServer.raw} raw + ${perServer.fiveMinute} 5-minute + ${perServer.hourly} hourly = ${perServer.total}`,
);
for (const dialect of PG ? ['sqlite', 'postgres'] : ['sqlite']) {
  const bytes = await measure(dialect);
  const perServerBytes = bytes * perServer.total;
  console.log(
    `${dialect}: ${fmt(bytes, 0)} bytes a sample (table + indexes, ${ROWS} rows); ${fmt(perServerBytes / 1e6, 2)} MB a server; 100,000 servers: ${fmt((perServerBytes * 1e5) / 1e9, 0)} GB (raw alone: ${fmt((bytes * perServer.raw * 1e5) / 1e9, 0)} GB)`,
  );
}
process.exit(0);
