#!/usr/bin/env node
// What the per-request access lines cost (docs/performance.md, "Logging and workers"): v1
// GET /api/v1/servers (50 servers) with PALISADE_ACCESS_LOG=1 (two JSON lines a request, the
// default before) against the default (none), measured with wrk -t1 -c50, wrk pinned to core 0 and
// the console to core 1, alternating. Its log goes to a file, as to journald. With
// --postgres URL it also compares 1 and 2 workers (--workers, not pinned: they need both cores).
// For the workers it also counts the CPU of the PostgreSQL server processes of the console's sessions
// (by application_name) and prints the load average: on 2 shared cores, 1 → 2 workers is read from
// CPU per request more than from requests/s (docs/performance.md, "Logging and workers").
// Usage: node bench/logging.mjs [--seconds 5] [--rounds 2] [--postgres URL] [--only workers]
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  arg,
  benchServerRow,
  cpuSeconds,
  hasWrk,
  pgBackendCpu,
  pgQuery,
  startPinned,
  stopChild,
  teamOf,
  writeTokenRotation,
  wrk,
} from './lib.mjs';

const SECONDS = Number(arg('seconds', '5'));
const ROUNDS = Number(arg('rounds', '2'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);
const ONLY_WORKERS = arg('only', '') === 'workers';

const root = new URL('..', import.meta.url).pathname;
const consoleDist = join(root, 'packages/console/dist/src');
const { loadConfig } = await import(join(consoleDist, 'config.js'));
const { openDatabase } = await import(join(consoleDist, 'db/database.js'));
const { createServices, createBoundaries } = await import(join(consoleDist, 'app.js'));

if (!hasWrk()) {
  console.error('wrk is needed (Debian package wrk)');
  process.exit(1);
}

/**
 * Accounts of 50 servers and 100 tokens each (the most an account holds), enough that the
 * 120-a-minute limit per token is never reached.
 */
async function prepare(env, tokenCount) {
  const config = loadConfig(env);
  const database = await openDatabase(config);
  const boundaries = createBoundaries(config);
  const services = createServices({ db: database.db, config, clock: Date.now, ...boundaries });
  await services.catalog.seed();
  const tokens = [];
  for (let a = 0; a * 100 < tokenCount; a += 1) {
    const account = teamOf(
      await services.accounts.create({
        email: `bench${a}@example.com`,
        password: 'bench-password',
        name: 'B',
      }),
    );
    const product = await services.catalog.addProduct(account.id, 3);
    await addServers(database.db, boundaries, account.id, product.id);
    for (let t = 0; t < 100; t += 1)
      tokens.push((await services.tokens.create(account.id, account.personId, `b${t}`)).token);
  }
  boundaries.outbound.close();
  await database.close();
  return tokens;
}

async function addServers(db, boundaries, accountId, productId) {
  for (let s = 0; s < 50; s += 1) {
    await db
      .insertInto('servers')
      .values(benchServerRow(accountId, productId, s, boundaries.secrets.seal('agk_x')))
      .execute();
  }
}

async function compare(label, env, variants, cpu) {
  // Up to ~10,000 requests a second for all rounds, 120 a minute per token.
  const tokens = await prepare(env, Math.ceil((8_000 * (SECONDS + 1) * ROUNDS * variants.length) / 100));
  const luaFile = writeTokenRotation(join(env.PALISADE_DATA_DIR, 'tokens.lua'), tokens);
  const results = variants.map(() => []);
  for (let round = 0; round < ROUNDS; round += 1) {
    for (const [i, variant] of variants.entries()) {
      const logFile = join(env.PALISADE_DATA_DIR, `console-${i}.log`);
      const running = await startPinned(
        [join(consoleDist, 'cli.js'), ...(variant.args ?? [])],
        { ...env, ...variant.env },
        cpu,
        logFile,
      );
      const url = `${running.url}/api/v1/servers`;
      wrk(url, { luaFile, seconds: 1 }); // warm-up
      const cpuBefore = cpuSeconds(running.child.pid);
      const pgBefore = env.appName ? await pgBackendCpu(PG, env.appName) : null;
      const result = wrk(url, { luaFile, seconds: SECONDS });
      result.cpuUsPerRequest = ((cpuSeconds(running.child.pid) - cpuBefore) * 1e6) / result.requests;
      if (pgBefore) {
        const pgAfter = await pgBackendCpu(PG, env.appName);
        const pgSeconds = [...pgAfter].reduce((sum, [pid, s]) => sum + s - (pgBefore.get(pid) ?? 0), 0);
        result.pgUsPerRequest = (pgSeconds * 1e6) / result.requests;
      }
      result.load = loadavg()[0];
      result.logBytes = statSync(logFile).size;
      await stopChild(running.child);
      results[i].push(result);
    }
  }
  console.log(`\n${label}: wrk -t1 -c50 -d${SECONDS}s, ${ROUNDS} alternating rounds`);
  for (const [i, variant] of variants.entries()) {
    for (const r of results[i]) {
      const pgCpu =
        r.pgUsPerRequest === undefined ? '' : `  PostgreSQL ${r.pgUsPerRequest.toFixed(0).padStart(4)} µs/request`;
      console.log(
        `  ${variant.name.padEnd(34)} ${r.rps.toFixed(0).padStart(7)} req/s  p99 ${r.p99ms.toFixed(1).padStart(6)} ms  console CPU ${r.cpuUsPerRequest.toFixed(0).padStart(4)} µs/request${pgCpu}  non-2xx ${r.non2xx}  log ${(r.logBytes / 1e6).toFixed(1)} MB  load ${r.load.toFixed(1)}`,
      );
    }
  }
}

const base = (dataDir) => ({
  PALISADE_DATA_DIR: dataDir,
  PALISADE_PORT: '0',
  PALISADE_LOG_LEVEL: 'info',
  PALISADE_BOOTSTRAP_ADMIN: '0',
});

if (!ONLY_WORKERS) {
  const sqliteDir = mkdtempSync(join(tmpdir(), 'palisade-bench-log-'));
  await compare(
    'SQLite, 1 process on core 1',
    base(sqliteDir),
    [
      { name: 'access lines on (PALISADE_ACCESS_LOG=1)', env: { PALISADE_ACCESS_LOG: '1' } },
      { name: 'access lines off (the default)', env: {} },
    ],
    '1',
  );
  rmSync(sqliteDir, { recursive: true, force: true });
}

if (PG) {
  const pgDir = mkdtempSync(join(tmpdir(), 'palisade-bench-log-'));
  const schema = `bench_log_${process.pid}`;
  // The console's sessions carry a name of their own, so their server processes' CPU is counted.
  const appName = `palisade-workers-${process.pid}`;
  const named = `${PG}${PG.includes('?') ? '&' : '?'}application_name=${appName}`;
  await compare(
    'PostgreSQL, workers on both cores (wrk on core 0 too)',
    { ...base(pgDir), PALISADE_DATABASE_URL: named, PALISADE_DATABASE_SCHEMA: schema, appName },
    [
      { name: '1 process', env: {} },
      { name: '2 workers (--workers 2)', env: {}, args: ['--workers', '2'] },
    ],
    null,
  );
  await pgQuery(PG, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  rmSync(pgDir, { recursive: true, force: true });
}
process.exit(0);
