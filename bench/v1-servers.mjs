#!/usr/bin/env node
// v1 GET /api/v1/servers (50 servers in the account) against a bare node:http server answering a
// constant JSON body, side by side on this machine. Bar (docs/performance.md): console ≥ 40% of the bare rps.
// Usage: node bench/v1-servers.mjs [--requests N] [--concurrency C] [--postgres URL] [--processes P]
// With --processes P, P console processes share the database and the requests are spread over them.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { arg, benchServerRow, fmt, load, startProcess } from './lib.mjs';

const TOTAL = Number(arg('requests', '20000'));
const CONCURRENCY = Number(arg('concurrency', '32'));
const PG = arg('postgres', process.env.PALISADE_BENCH_DATABASE_URL);
const PROCESSES = Number(arg('processes', '1'));

const BARE_SERVER = `
const body = JSON.stringify({ data: { servers: [] } });
const server = http.createServer((req, res) => {
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => console.log('bare listening on http://127.0.0.1:' + server.address().port));
`;

const root = new URL('..', import.meta.url).pathname;
const consoleDist = join(root, 'packages/console/dist/src');
const { loadConfig } = await import(join(consoleDist, 'config.js'));
const { openDatabase } = await import(join(consoleDist, 'db/database.js'));
const { createServices, createBoundaries } = await import(join(consoleDist, 'app.js'));

async function prepare(env) {
  // Enough tokens that the 120-a-minute limit per token is not what is measured: 100 per account.
  const config = loadConfig(env);
  const database = await openDatabase(config);
  const boundaries = createBoundaries(config);
  const services = createServices({ db: database.db, config, clock: Date.now, ...boundaries });
  await services.catalog.seed();
  const tokens = [];
  const accounts = Math.ceil(TOTAL / (100 * 110));
  for (let a = 0; a < accounts; a += 1) {
    const account = await services.accounts.create({
      email: `bench${a}@example.com`,
      password: 'bench-password',
      name: `Bench ${a}`,
    });
    const product = await services.catalog.addProduct(account.id, 3);
    for (let s = 0; s < 50; s += 1) {
      await database.db
        .insertInto('servers')
        .values(benchServerRow(account.id, product.id, s, boundaries.secrets.seal('agk_x')))
        .execute();
    }
    for (let t = 0; t < 100; t += 1) tokens.push((await services.tokens.create(account.id, `bench-${t}`)).token);
  }
  boundaries.outbound.close();
  await database.close();
  return tokens;
}

const results = [];
for (const dialect of PG ? ['sqlite', 'postgres'] : ['sqlite']) {
  const dataDir = mkdtempSync(join(tmpdir(), 'palisade-bench-'));
  const schema = `bench_${process.pid}`;
  const env = {
    PALISADE_DATA_DIR: dataDir,
    PALISADE_PORT: '0',
    PALISADE_LOG_LEVEL: 'warn',
    PALISADE_BOOTSTRAP_ADMIN: '0',
    ...(dialect === 'postgres' ? { PALISADE_DATABASE_URL: PG, PALISADE_DATABASE_SCHEMA: schema } : {}),
  };
  process.stdout.write(`[${dialect}] preparing ${TOTAL} requests' worth of tokens and 50 servers per account…\n`);
  const tokens = await prepare(env);
  const consoles = await Promise.all(
    Array.from({ length: PROCESSES }, () => startProcess([join(consoleDist, 'cli.js')], env)),
  );
  const headersFor = (i) => ({ authorization: `Bearer ${tokens[i % tokens.length]}` });
  const urls = consoles.map((c) => `${c.url}/api/v1/servers`);
  const url = urls[0];
  const sampleBody = await (await fetch(url, { headers: headersFor(0) })).text();
  const bare = await startProcess(['--input-type=module', '-e', BARE_SERVER], { BARE_BODY: sampleBody });
  const bareUrl = `${bare.url}/api/v1/servers`;
  await load({ urls, total: 500, concurrency: CONCURRENCY, headersFor }); // warm-up
  await load({ url: bareUrl, total: 500, concurrency: CONCURRENCY });
  process.stdout.write(`[${dialect}] measuring…\n`);
  const reference = await load({ url: bareUrl, total: TOTAL, concurrency: CONCURRENCY });
  const measured = await load({ urls, total: TOTAL, concurrency: CONCURRENCY, headersFor });
  for (const c of consoles) c.stop();
  bare.stop();
  rmSync(dataDir, { recursive: true, force: true });
  results.push({ dialect, reference, measured });
}

console.log(`\nv1 GET /api/v1/servers, ${TOTAL} requests, ${CONCURRENCY} in flight, ${PROCESSES} console process(es)`);
console.log('target        rps      p50 ms   p99 ms   statuses');
for (const { dialect, reference, measured } of results) {
  console.log(
    `bare node:http ${fmt(reference.rps, 0).padStart(8)} ${fmt(reference.p50, 2).padStart(8)} ${fmt(reference.p99, 2).padStart(8)}   ${JSON.stringify(reference.statuses)}`,
  );
  console.log(
    `console/${dialect.padEnd(6)} ${fmt(measured.rps, 0).padStart(8)} ${fmt(measured.p50, 2).padStart(8)} ${fmt(measured.p99, 2).padStart(8)}   ${JSON.stringify(measured.statuses)}`,
  );
  const ratio = measured.rps / reference.rps;
  console.log(
    `ratio console/${dialect} ÷ bare = ${fmt(ratio * 100, 1)}% (bar: ≥ 40%) ${ratio >= 0.4 ? 'PASS' : 'BELOW BAR'}\n`,
  );
}
process.exit(0);
