// Shared pieces of the benchmarks: a keep-alive load generator, percentiles and process helpers.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/**
 * Sends `total` GET requests with `concurrency` in flight over keep-alive sockets, spread over `urls`.
 * `headersFor(i)` picks each request's headers. Returns requests per second and latency percentiles (ms).
 */
export async function load({ url, urls = [url], total, concurrency, headersFor = () => ({}) }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = [];
  const statuses = new Map();
  let next = 0;
  const one = (i) =>
    new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      const req = http.get(urls[i % urls.length], { agent, headers: headersFor(i) }, (res) => {
        res.resume();
        res.on('end', () => {
          latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          resolve();
        });
      });
      req.on('error', reject);
    });
  const worker = async () => {
    while (next < total) await one(next++);
  };
  const began = process.hrtime.bigint();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  return {
    rps: total / seconds,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    statuses: Object.fromEntries(statuses),
  };
}

/**
 * BENCH_NODE_ARGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`, or a V8 flag to try) goes to every Node
 * process measured, whichever helper starts it: Node refuses --cpu-prof in NODE_OPTIONS.
 */
const nodeArgs = () => (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean);

/**
 * Starts a node program and resolves with the first URL it prints after `pattern`; with `cpu`
 * (e.g. '1') it runs pinned to that core by taskset (which execs node: the child's pid is node's).
 */
export function startProcess(args, env, pattern = /listening on (http:\/\/\S+)/, cpu = null) {
  const node = [process.execPath, ...nodeArgs(), ...args];
  const command = cpu === null ? node : ['taskset', '-c', cpu, ...node];
  const child = spawn(command[0], command.slice(1), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      // BENCH_LOG=FILE keeps what the process printed (e.g. with BENCH_NODE_ARGS=--trace-gc).
      if (process.env.BENCH_LOG) appendFileSync(process.env.BENCH_LOG, d);
      out += d;
      const m = pattern.exec(out);
      if (m) resolve({ child, url: m[1], stop: () => child.kill('SIGTERM') });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

/**
 * CPU seconds (user + system) the process and its children (cluster workers) have used: per request,
 * this figure suffers less than throughput when other work shares the machine.
 */
export function cpuSeconds(pid) {
  const ticks = (p) => {
    try {
      const fields = readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {
      return 0;
    }
  };
  const children = (p) => {
    try {
      return readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  return [pid, ...children(pid)].reduce((sum, p) => sum + ticks(p), 0) / 100; // USER_HZ
}

/** One statement on its own connection to `url` (statistics, dropping a schema), its rows. */
export async function pgQuery(url, text, params = []) {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** CPU seconds used so far by each PostgreSQL server process of the sessions named `appName`, by pid. */
export async function pgBackendCpu(url, appName) {
  const rows = await pgQuery(url, 'SELECT pid FROM pg_stat_activity WHERE application_name = $1', [appName]);
  return new Map(rows.map((r) => [r.pid, cpuSeconds(r.pid)]));
}

/** True when wrk is installed (Debian package wrk). */
export const hasWrk = () => !spawnSync('wrk', ['--version']).error;

/**
 * `wrk -t1 -c<connections> -d<seconds>s --latency` pinned to `cpu` (core 0, the load generator's
 * core), with a Lua script (`luaFile`, or none) making each request. Returns requests/s, p50 and
 * p99 in ms, non-2xx answers, socket errors and the request count.
 */
export function wrk(url, { luaFile = null, seconds = 10, connections = 50, cpu = '0' } = {}) {
  const args = ['-c', cpu, 'wrk', '-t1', `-c${connections}`, `-d${seconds}s`, '--latency'];
  if (luaFile) args.push('-s', luaFile);
  const out = spawnSync('taskset', [...args, url], { encoding: 'utf8' }).stdout;
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1]);
  const latency = (p) => {
    const m = new RegExp(`${p}%\\s+([\\d.]+)(us|ms|s)`).exec(out);
    return m ? Number(m[1]) * { us: 0.001, ms: 1, s: 1000 }[m[2]] : Number.NaN;
  };
  const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(out)?.[1] ?? 0);
  const socketErrors = /Socket errors: (.*)/.exec(out)?.[1] ?? null;
  const requests = Number(/(\d+) requests in/.exec(out)?.[1]);
  return { rps, p50ms: latency(50), p99ms: latency(99), non2xx, socketErrors, requests };
}

export const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/** `--name value` from the command line, or the fallback. */
export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}

// ---- the console's own code, for benches that prepare its database in process ----

export const root = fileURLToPath(new URL('..', import.meta.url));
/** The console's build (npm run build first). */
export const consoleDist = join(root, 'packages/console/dist/src');

/**
 * Where a bench's console keeps its data: a new temp dir, and with `pg` (a PostgreSQL URL) a new
 * schema in that database. `env` is what a console process, or openConsole, needs; `remove()` drops both.
 */
export function benchStore(name, pg, extra = {}) {
  const dir = mkdtempSync(join(tmpdir(), `palisade-bench-${name}-`));
  const schema = `bench_${name.replace(/\W/g, '_')}_${process.pid}`;
  return {
    dialect: pg ? 'postgres' : 'sqlite',
    env: {
      PALISADE_DATA_DIR: dir,
      PALISADE_LOG_LEVEL: 'warn',
      ...(pg ? { PALISADE_DATABASE_URL: pg, PALISADE_DATABASE_SCHEMA: schema } : {}),
      ...extra,
    },
    async remove() {
      rmSync(dir, { recursive: true, force: true });
      if (!pg) return;
      await pgQuery(pg, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}

/**
 * The console's services on the store's database, in this process (migrated on open); `dist`: the
 * build to use (another commit's, for a before/after whose migrations differ).
 */
export async function openConsole(env, clock = Date.now, dist = consoleDist) {
  const { loadConfig } = await import(join(dist, 'config.js'));
  const { openDatabase } = await import(join(dist, 'db/database.js'));
  const { createServices, createBoundaries } = await import(join(dist, 'app.js'));
  const config = loadConfig(env);
  const database = await openDatabase(config);
  const boundaries = createBoundaries(config);
  const services = createServices({ db: database.db, config, clock, ...boundaries });
  return {
    config,
    db: database.db,
    boundaries,
    services,
    async close() {
      boundaries.outbound.close();
      await database.close();
    },
  };
}

/**
 * The team a bench works in, from what `services.accounts.create` answers (a person and their first
 * team, docs/teams.md): `id` the team (what every row's account_id holds), `personId` its owner.
 */
export const teamOf = ({ person, teamId }) => ({ id: teamId, personId: person.id });

/** Server `s` of a bench account: a row as check-ins leave it, with a score and a latest sample. */
export function benchServerRow(accountId, productId, s, sealedKey) {
  return {
    account_id: accountId,
    product_id: productId,
    name: `web-${s}`,
    api_url: `http://10.0.0.${s}:9100`,
    api_key_enc: sealedKey,
    hostname: `web-${s}.example.net`,
    public_ip: `203.0.113.${s}`,
    facts: JSON.stringify({ os: 'Debian 12', kernel: '6.1.0', cores: 4 }),
    last_seen: Date.now(),
    latest_sample: JSON.stringify({ ts: Date.now(), cpu_pct: 10, mem_used_mb: 1000 }),
    score_base: JSON.stringify({
      components: { cpu: 200, memory: 200, disk: 150, network: 150, stability: 150 },
      notes: [],
    }),
    score_base_total: 850,
    created_at: Date.now(),
  };
}

/** One GET at a time on one kept-alive socket: resolves with its milliseconds, rejects on a non-200. */
export function timedGetter() {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const get = (url, headers) =>
    new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      http
        .get(url, { agent, headers }, (res) => {
          res.resume();
          res.on('end', () =>
            res.statusCode === 200
              ? resolve(Number(process.hrtime.bigint() - started) / 1e6)
              : reject(new Error(`HTTP ${res.statusCode}`)),
          );
        })
        .on('error', reject);
    });
  return { get, close: () => agent.destroy() };
}

// ---- wrk, pinned processes and token rotation (docs/performance.md, "How the v1 list is measured") ----

/**
 * A wrk Lua script sending each request with the next token of `tokens`, written to `file`. The
 * requests are formatted once, in `init`: formatting one a request cost wrk's single thread enough
 * that it, not the measured process, set the pace at 20,000 requests a second and more.
 */
export function writeTokenRotation(file, tokens) {
  writeFileSync(
    file,
    `local tokens = {${tokens.map((t) => `"${t}"`).join(',')}}\nlocal requests = {}\nlocal i = 0\n` +
      'init = function()\n  for k, t in ipairs(tokens) do\n    requests[k] = wrk.format("GET", nil, { ["authorization"] = "Bearer " .. t })\n  end\nend\n' +
      'request = function()\n  i = i + 1\n  return requests[(i % #requests) + 1]\nend\n',
  );
  return file;
}

/**
 * Starts a node program pinned to `cpu` (null: unpinned) with its output in `logFile`; resolves with
 * the child and the URL it prints after "listening on" once it listens.
 */
export async function startPinned(args, env, cpu, logFile) {
  const fd = openSync(logFile, 'w');
  const command = cpu === null ? [process.execPath] : ['taskset', '-c', cpu, process.execPath];
  const child = spawn(command[0], [...command.slice(1), ...nodeArgs(), ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', fd, fd],
  });
  for (;;) {
    const m = /listening on (http:\/\/\S+)/.exec(readFileSync(logFile, 'utf8'));
    if (m) return { child, url: m[1] };
    if (child.exitCode !== null) throw new Error(readFileSync(logFile, 'utf8'));
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** SIGTERM, resolved once the child has exited. */
export function stopChild(child) {
  if (child.exitCode !== null) return Promise.resolve();
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  return exited;
}
