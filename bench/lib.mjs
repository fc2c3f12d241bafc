// Shared pieces of the benchmarks: a keep-alive load generator, percentiles and process helpers.
import { spawn } from 'node:child_process';
import http from 'node:http';

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

/** Starts a node program and resolves with the first URL it prints after `pattern`. */
export function startProcess(args, env, pattern = /listening on (http:\/\/\S+)/) {
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) resolve({ child, url: m[1], stop: () => child.kill('SIGTERM') });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${out}`)));
  });
}

export const fmt = (n, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

/** `--name value` from the command line, or the fallback. */
export function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
}
