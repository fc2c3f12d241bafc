// The suite around the sections (time shares, overruns, failures), the report it builds, and a run
// for the console: start, log batches, result or error, one run at a time.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { benchmarkReport, generateToken, scoreBenchmark } from '@palisade/protocol';
import { ConsoleRefused, type RunLink } from '../src/bench/console-link.js';
import type { CpuRunner } from '../src/bench/cpu.js';
import { benchmarkJobHandler } from '../src/bench/job.js';
import {
  LOG_LINE_MAX,
  LOG_LINES_PER_CALL,
  parseBenchmarkJob,
  runBenchmarkJob,
  runLogSender,
} from '../src/bench/run.js';
import { type BenchSection, runSections, runSuite } from '../src/bench/suite.js';
import type { BenchmarkReport } from '../src/bench/types.js';
import { describeRun } from '../src/cli/bench.js';
import { defaultConfig, parseConfig } from '../src/config/config.js';
import { type AgentDeps, realHost } from '../src/deps.js';
import type { Log } from '../src/log.js';
import { readFacts } from '../src/measure/facts.js';
import { tempDir } from './agent-process.js';

const fixtures = (path: string) => fileURLToPath(new URL(`../../test/fixtures/${path}`, import.meta.url));

/** The fixture host; /proc/stat reads 1 and 2 (facts, start of the cpu section) are `before`, later ones `after`. */
function fixtureDeps(): AgentDeps {
  const host = realHost(fixtures('linux'));
  let statReads = 0;
  let t = 0;
  return {
    clock: () => 1_700_000_000_000,
    monotonic: () => (t += 5),
    host: {
      ...host,
      read: async (path) => {
        if (path === '/proc/stat') {
          statReads++;
          return (await host.read(path)).replace(
            /^cpu .*$/m,
            statReads <= 2
              ? 'cpu  100000 500 20000 400000 1000 0 500 2000 0 0'
              : 'cpu  100900 500 20050 400000 1000 0 500 2050 0 0',
          );
        }
        if (path === '/proc/cpuinfo') return realHost(fixtures('bench')).read('/cpuinfo');
        return host.read(path);
      },
    },
  };
}

const fakeCpu: CpuRunner = async (req, threads) =>
  Array.from({ length: threads }, () => ({
    bytes: Array.from({ length: req.rounds }, (_, r) => (r % 2 ? 420 : 380) * 1000 * req.roundMs),
    ms: Array.from({ length: req.rounds }, () => req.roundMs),
  }));

const section = (name: BenchSection['name'], run: BenchSection['run']): BenchSection => ({ name, share: 0.25, run });

test('sections: measured ones are kept; a failing one and an overrunning one are null with the reason', async () => {
  const lines: string[] = [];
  let aborted = false;
  const result = await runSections(
    [
      section('cpu', async () => ({ single_mb_s: 1, multi_mb_s: 2, threads: 2 })),
      section('stability', async () => {
        throw new Error('no /proc here');
      }),
      section(
        'disk',
        (ctx) =>
          new Promise((_, reject) => {
            ctx.signal.addEventListener('abort', () => {
              aborted = true;
              reject(ctx.signal.reason);
            });
          }),
      ),
      section('network', async () => ({ down_mbit_s: 1, up_mbit_s: 1, latency_ms: 1 })),
    ],
    { budgetMs: 400, now: () => performance.now(), log: (l) => lines.push(l) },
  );
  assert.deepEqual(result.measurements.cpu, { single_mb_s: 1, multi_mb_s: 2, threads: 2 });
  assert.equal(result.measurements.stability, null);
  assert.equal(result.skipped.stability, 'no /proc here');
  assert.equal(result.measurements.disk, null);
  assert.match(result.skipped.disk!, /did not finish within 0\.\d s, its share of the time limit/);
  assert.ok(aborted, 'the overrunning section was told to stop');
  assert.deepEqual(Object.keys(result.skipped).sort(), ['disk', 'stability']);
  assert.ok(lines.includes('stability: not measured: no /proc here'));
});

test('sections: past the time limit the rest are skipped with the reason', async () => {
  let t = 0;
  const result = await runSections(
    [
      section('cpu', async () => {
        t += 10_000;
        return { single_mb_s: 1, multi_mb_s: 1, threads: 1 };
      }),
      section('disk', async () => ({ seq_write_mb_s: 1, seq_read_mb_s: 1, rand_write_iops: 1 })),
    ],
    { budgetMs: 5000, now: () => t, log: () => {} },
  );
  assert.ok(result.measurements.cpu);
  assert.equal(result.measurements.disk, null);
  assert.match(result.skipped.disk!, /reached its time limit \(bench\.max_seconds = 5 s\) before this section/);
});

test('suite: the report has the check-ins’ hardware, every section, and passes the protocol schema', async () => {
  const dir = tempDir('palisade-bench-suite-');
  try {
    const deps = fixtureDeps();
    const lines: string[] = [];
    const link = {
      ping: async () => {},
      download: async (bytes: number) => bytes,
      upload: async () => {},
    };
    const report = await runSuite({
      deps,
      settings: { dir: dir.path, maxDiskMb: 8, maxSeconds: 30 },
      network: link,
      log: (l) => lines.push(l),
      cpu: fakeCpu,
    });
    const parsed = benchmarkReport.parse(report);
    const facts = await readFacts(fixtureDeps(), null);
    assert.equal(parsed.hardware.cores, facts.cores);
    assert.equal(parsed.hardware.mem_total_mb, facts.mem_total_mb);
    assert.equal(parsed.hardware.cpu_model, 'Intel(R) Xeon(R) Test CPU @ 2.00GHz');
    assert.deepEqual(parsed.skipped, {});
    assert.equal(parsed.measurements.cpu?.threads, facts.cores);
    assert.equal(parsed.measurements.stability?.steal_pct, 5);
    assert.ok(parsed.measurements.disk && parsed.measurements.network);
    assert.ok(lines[0]!.startsWith(`suite: ${facts.cores} cores`));
    const scores = scoreBenchmark(parsed.measurements);
    for (const s of Object.values(scores)) assert.ok(typeof s === 'number' && s >= 0 && s <= 100);
  } finally {
    dir.remove();
  }
});

test('suite without a console: network is null and says why; --quick caps the disk', async () => {
  const dir = tempDir('palisade-bench-suite-');
  try {
    const lines: string[] = [];
    const report = await runSuite({
      deps: fixtureDeps(),
      settings: { dir: dir.path, maxDiskMb: 1024, maxSeconds: 90 },
      quick: true,
      network: { skip: 'no console here' },
      log: (l) => lines.push(l),
      cpu: fakeCpu,
    });
    assert.equal(report.measurements.network, null);
    assert.deepEqual(report.skipped, { network: 'no console here' });
    assert.match(lines[0]!, /time limit 10 s \(quick\), disk at most 64 MB/);
    const text = describeRun(report, scoreBenchmark(report.measurements)).join('\n');
    assert.match(text, /^network +not measured: no console here$/m);
    assert.match(text, /^cpu +SHA-256 .* score \d+\.\d$/m);
    assert.match(text, /^total +\d+\.\d \(weighted mean of the measured sections\)$/m);
  } finally {
    dir.remove();
  }
});

const REPORT: BenchmarkReport = {
  measurements: { cpu: { single_mb_s: 1, multi_mb_s: 2, threads: 2 }, disk: null, network: null, stability: null },
  skipped: { disk: 'x', network: 'y', stability: 'z' },
  hardware: { cores: 2, mem_total_mb: 1000 },
  duration_ms: 5,
};

/** A console link that records every call. */
function recordingLink(refuse: Partial<Record<'start' | 'log' | 'result', ConsoleRefused | Error>> = {}) {
  const calls: { what: string; body: unknown }[] = [];
  let closed = false;
  const link: RunLink = {
    async report(what, body) {
      calls.push({ what, body });
      const err = refuse[what];
      if (err) {
        if (what === 'result') delete refuse.result; // fails once
        throw err;
      }
    },
    ping: async () => {},
    download: async (b) => b,
    upload: async () => {},
    close() {
      closed = true;
    },
  };
  return { link, calls, closed: () => closed };
}

const quietLog: Log = () => {};
const settings = { dir: '/nowhere', maxDiskMb: 8, maxSeconds: 10 };
const job = { run_id: 7, label: 'nightly', token: generateToken('benchmark'), report_path: '/api/agent/benchmarks/7' };

test('a run reports start, its log lines, then the report; the link is closed', async () => {
  const { link, calls, closed } = recordingLink();
  const outcome = await runBenchmarkJob(job, {
    deps: fixtureDeps(),
    settings,
    consoleUrl: 'http://console.invalid',
    log: quietLog,
    link,
    suite: async (o) => {
      o.log('cpu: fine');
      o.log('x'.repeat(5000));
      return REPORT;
    },
  });
  assert.equal(outcome, 'done');
  assert.deepEqual(
    calls.map((c) => c.what),
    ['start', 'log', 'result'],
  );
  const lines = (calls[1]!.body as { lines: string[] }).lines;
  assert.equal(lines[0], 'cpu: fine');
  assert.equal(lines[1]!.length, LOG_LINE_MAX);
  assert.deepEqual(calls[2]!.body, REPORT);
  assert.ok(closed());
});

test('a broken suite ends the run with {error}; a refused start runs nothing; a lost result is retried', async () => {
  const failed = recordingLink();
  const outcome = await runBenchmarkJob(job, {
    deps: fixtureDeps(),
    settings,
    consoleUrl: 'http://console.invalid',
    log: quietLog,
    link: failed.link,
    suite: async () => {
      throw new Error('out of workers');
    },
  });
  assert.equal(outcome, 'failed');
  assert.deepEqual(failed.calls.at(-1), {
    what: 'result',
    body: { error: 'the benchmark suite failed: out of workers' },
  });

  const refused = recordingLink({ start: new ConsoleRefused(409, 'the console refused start (HTTP 409)') });
  let ran = false;
  const warnings: string[] = [];
  const notStarted = await runBenchmarkJob(job, {
    deps: fixtureDeps(),
    settings,
    consoleUrl: 'http://console.invalid',
    log: (level, m) => level === 'warn' && warnings.push(m),
    link: refused.link,
    suite: async () => {
      ran = true;
      return REPORT;
    },
  });
  assert.equal(notStarted, 'not started');
  assert.equal(ran, false);
  assert.match(warnings[0]!, /benchmark run 7 "nightly" not started: .*HTTP 409/);
  assert.ok(refused.closed());

  const flaky = recordingLink({ result: new ConsoleRefused(503, 'HTTP 503') });
  const retried = await runBenchmarkJob(job, {
    deps: fixtureDeps(),
    settings,
    consoleUrl: 'http://console.invalid',
    log: quietLog,
    link: flaky.link,
    suite: async () => REPORT,
    retryDelaysMs: [1],
  });
  assert.equal(retried, 'done');
  assert.deepEqual(
    flaky.calls.map((c) => c.what),
    ['start', 'result', 'result'],
  );
});

test('log lines go in batches of at most 500', async () => {
  const batches: number[] = [];
  const sender = runLogSender(
    {
      report: async (_what, body) => {
        batches.push((body as { lines: string[] }).lines.length);
      },
    },
    () => {},
  );
  for (let i = 0; i < 1201; i++) sender.push(`line ${i}`);
  await sender.flush();
  assert.deepEqual(batches, [LOG_LINES_PER_CALL, LOG_LINES_PER_CALL, 201]);
});

test('a benchmark job must carry a run number, a bmt_ token and its own report path', () => {
  assert.deepEqual(parseBenchmarkJob({ kind: 'benchmark', ...job }), job);
  assert.match(String(parseBenchmarkJob({ ...job, run_id: '7' })), /run_id/);
  assert.match(String(parseBenchmarkJob({ ...job, token: 'dmn_abc' })), /token/);
  assert.match(String(parseBenchmarkJob({ ...job, token: `${job.token.slice(0, -1)}x` })), /token/);
  assert.match(String(parseBenchmarkJob({ ...job, report_path: 'https://evil.example/x' })), /report_path/);
  assert.match(String(parseBenchmarkJob({ ...job, report_path: '/api/agent/benchmarks/8' })), /report_path/);
});

test('one run at a time: a second job while the first is starting is refused with a log line', async () => {
  const held: http.ServerResponse[] = [];
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    seen.push(`${req.method} ${req.url} ${req.headers.authorization?.slice(0, 11)}`);
    req.resume();
    held.push(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const warnings: string[] = [];
  const handle = benchmarkJobHandler({
    deps: fixtureDeps(),
    log: (level, m) => level === 'warn' && warnings.push(m),
    settings: () => settings,
    consoleUrl: () => url,
  });
  try {
    const first = handle({ kind: 'benchmark', ...job });
    while (held.length === 0) await new Promise((r) => setTimeout(r, 10));
    await handle({ kind: 'benchmark', ...job, run_id: 8, report_path: '/api/agent/benchmarks/8' });
    assert.ok(
      warnings.some((w) => /benchmark run 8 not started: run 7 is still running/.test(w)),
      warnings.join('\n'),
    );
    held[0]!.writeHead(409, { 'content-type': 'application/json' }).end('{"error":"the run is done"}');
    await first;
    assert.deepEqual(seen, ['POST /api/agent/benchmarks/7/start Bearer bmt_']);
    assert.ok(warnings.some((w) => /run 7 "nightly" not started: .*HTTP 409\): the run is done/.test(w)));
    await handle({ kind: 'benchmark', ...job, token: 'nope' });
    assert.ok(warnings.some((w) => /ignoring a benchmark job: token/.test(w)));
  } finally {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('config: bench.dir, bench.max_disk_mb and bench.max_seconds are read and checked', () => {
  assert.deepEqual(defaultConfig().bench, { dir: null, maxDiskMb: 256, maxSeconds: 90 });
  const c = parseConfig('bench.dir = /srv/scratch/\nbench.max_disk_mb = 1024\nbench.max_seconds = 30\n', 'a.conf');
  assert.deepEqual(c.bench, { dir: '/srv/scratch', maxDiskMb: 1024, maxSeconds: 30 });
  assert.equal(parseConfig('bench.dir =\n', 'a.conf').bench.dir, null);
  assert.throws(
    () => parseConfig('bench.dir = scratch\nbench.max_disk_mb = 0\nbench.max_seconds = 3600\n', 'a.conf'),
    (err: Error) =>
      /a\.conf:1: bad value for bench\.dir: expected an absolute directory path/.test(err.message) &&
      /a\.conf:2: bad value for bench\.max_disk_mb: expected a whole number from 8 to 1048576/.test(err.message) &&
      /a\.conf:3: bad value for bench\.max_seconds: expected a whole number from 5 to 600/.test(err.message),
  );
});
