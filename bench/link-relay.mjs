#!/usr/bin/env node
// Outbound links across console processes (docs/deploy.md, "Outbound links and several processes"):
// the metrics proxy through an agent's link called on the process that does not hold it — relayed
// through PostgreSQL LISTEN/NOTIFY, and through Redis pub/sub when a Redis is given — beside the
// same call on the process that holds the link, alternated one at a time in the same run.
// Usage: node bench/link-relay.mjs [--postgres URL] [--redis URL] [--requests N]
// (defaults: PALISADE_TEST_DATABASE_URL and PALISADE_TEST_REDIS_URL; without PostgreSQL it is skipped)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { arg, fmt, percentile, pgQuery, startProcess, timedGetter } from './lib.mjs';

const PG = arg('postgres', process.env.PALISADE_TEST_DATABASE_URL);
const REDIS = arg('redis', process.env.PALISADE_TEST_REDIS_URL);
const REQUESTS = Number(arg('requests', '1000'));
if (!PG) {
  console.log('link-relay: skipped, it needs PostgreSQL: --postgres URL (or PALISADE_TEST_DATABASE_URL)');
  process.exit(0);
}
const root = new URL('..', import.meta.url).pathname;
const consoleCli = join(root, 'packages/console/dist/src/cli.js');
const agentCli = join(root, 'packages/agent/dist/src/cli.js');
const dir = mkdtempSync(join(tmpdir(), 'palisade-link-relay-bench-'));

const conf = join(dir, 'agent.conf');
writeFileSync(
  conf,
  'metrics.listen = 127.0.0.1:0\ncheckin.interval_s = 30\nprotection.backend = monitor\nconsole.connect = outbound\n',
);
const keyOut = spawnSync(process.execPath, [agentCli, 'key', '--state-dir', join(dir, 'agent'), '--config', conf], {
  encoding: 'utf8',
});
const key = /agk_[0-9A-Za-z]+/.exec(keyOut.stdout + keyOut.stderr)?.[0];
if (!key) throw new Error(`palisade-agent key failed: ${keyOut.stdout}${keyOut.stderr}`);
const agent = await startProcess(
  [agentCli, 'run', '--config', conf, '--state-dir', join(dir, 'agent')],
  {},
  /listening on (https?:\/\/\S+)/,
);

/** Two console processes on one schema (and one Redis prefix); the agent enrolled, its link on the first. */
async function pair(bus) {
  const schema = `bench_link_relay_${bus.toLowerCase()}_${process.pid}`;
  const env = {
    PALISADE_DATA_DIR: join(dir, 'console'),
    PALISADE_PORT: '0',
    PALISADE_LOG_LEVEL: 'warn',
    PALISADE_BOOTSTRAP_ADMIN: '0',
    PALISADE_ALLOW_PRIVATE_TARGETS: '1',
    PALISADE_DATABASE_URL: PG,
    PALISADE_DATABASE_SCHEMA: schema,
    ...(bus === 'Redis' ? { PALISADE_REDIS_URL: REDIS, PALISADE_REDIS_PREFIX: `bench-link-relay-${process.pid}` } : {}),
  };
  const holder = await startProcess([consoleCli], env);
  const other = await startProcess([consoleCli], env);
  const call = async (base, method, path, body, cookie) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...(cookie ? { cookie } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
    });
    return { res, json: await res.json() };
  };
  const email = `relay-${bus}-${process.pid}@example.com`;
  const reg = await call(holder.url, 'POST', '/api/auth/register', { email, password: 'relay-bench', name: 'R' });
  const cookie = reg.res.headers.get('set-cookie').split(';')[0];
  const product = (await call(holder.url, 'POST', '/api/products', { catalog_id: 1 }, cookie)).json.data.product;
  // Added on the first process: the agent is enrolled with its address, so its link ends there.
  const added = await call(
    holder.url,
    'POST',
    '/api/servers',
    { product_id: product.id, name: 'relayed', api_url: agent.url, api_key: key },
    cookie,
  );
  const server = added.json.data?.server;
  if (!server) throw new Error(`add: ${JSON.stringify(added.json)}`);
  // A server added by its address is called directly; its calls go down the agent's link once it is
  // set to outbound (as e2e/link-relay.test.ts does).
  const switched = await call(holder.url, 'PUT', `/api/servers/${server.id}/connection`, { mode: 'outbound' }, cookie);
  if (!switched.res.ok) throw new Error(`connection: ${JSON.stringify(switched.json)}`);
  for (let i = 0; ; i += 1) {
    const seen = (await call(holder.url, 'GET', `/api/servers/${server.id}`, undefined, cookie)).json.data.server;
    if (seen.connection.link === 'up' && seen.connection.since !== null) break;
    if (i > 200) throw new Error('the link did not come up on the first process');
    await sleep(100);
  }
  return {
    holder,
    other,
    cookie,
    serverId: server.id,
    async stop() {
      holder.stop();
      other.stop();
      await sleep(500);
      await pgQuery(PG, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

const timed = timedGetter();
for (const bus of ['PostgreSQL', ...(REDIS ? ['Redis'] : [])]) {
  const p = await pair(bus);
  const path = `/api/servers/${p.serverId}/metrics`;
  const measure = async (n) => {
    const viaHolder = [];
    const relayed = [];
    for (let i = 0; i < n; i += 1) {
      viaHolder.push(await timed.get(`${p.holder.url}${path}`, { cookie: p.cookie }));
      relayed.push(await timed.get(`${p.other.url}${path}`, { cookie: p.cookie }));
    }
    return { viaHolder: viaHolder.sort((a, b) => a - b), relayed: relayed.sort((a, b) => a - b) };
  };
  await measure(Math.min(200, REQUESTS)); // warm-up
  const { viaHolder, relayed } = await measure(REQUESTS);
  const added = percentile(relayed, 50) - percentile(viaHolder, 50);
  console.log(`metrics proxy through an outbound link, relayed through ${bus}, ${REQUESTS} calls each`);
  console.log(
    `  on the process holding the link : median ${fmt(percentile(viaHolder, 50), 3)} ms, p99 ${fmt(percentile(viaHolder, 99), 3)} ms`,
  );
  console.log(
    `  on the other process (relayed)  : median ${fmt(percentile(relayed, 50), 3)} ms, p99 ${fmt(percentile(relayed, 99), 3)} ms`,
  );
  console.log(`  the relay adds at the median: ${fmt(added, 3)} ms`);
  await p.stop();
}
timed.close();
agent.stop();
await sleep(500);
rmSync(dir, { recursive: true, force: true });
