// The benchmark's measurement pieces, each on its own: /proc/stat steal, spread, the CPU, disk and
// network sections with a fake worker runner, a stepping clock and a fake console link. No test
// asserts how long anything took.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { CpuRunner } from '../src/bench/cpu.js';
import { MAX_THREADS, measureCpu, measureCpuSpread, STABILITY_ROUNDS } from '../src/bench/cpu.js';
import { benchBlock } from '../src/bench/cpu-work.js';
import { diskBudgetBytes, measureDisk } from '../src/bench/disk.js';
import { measureNetwork, median, type NetworkLink, PAYLOAD_MAX } from '../src/bench/network.js';
import { parseStealTimes, spreadPercent, stealPercent } from '../src/bench/steal.js';

const MiB = 1024 * 1024;
const fixture = (name: string) =>
  readFileSync(fileURLToPath(new URL(`../../test/fixtures/bench/${name}`, import.meta.url)), 'utf8');

/** A monotonic clock that moves `stepMs` each time it is read, plus whatever `advance` adds. */
function steppingClock(stepMs: number) {
  let t = 0;
  return {
    now: () => {
      t += stepMs;
      return t;
    },
    advance(ms: number) {
      t += ms;
    },
  };
}

const never = new AbortController().signal;

test('steal: the cpu line of /proc/stat gives total and steal jiffies; the share between two readings', () => {
  const before = parseStealTimes(fixture('proc-stat-before'));
  const after = parseStealTimes(fixture('proc-stat-after'));
  assert.deepEqual(before, { steal: 2000, total: 524000 });
  assert.deepEqual(after, { steal: 2050, total: 525000 });
  assert.equal(stealPercent(before, after), 5);
  assert.equal(stealPercent(after, after), 0, 'no time passed');
  assert.throws(() => parseStealTimes('intr 1 2\n'), /no "cpu" line/);
  assert.throws(() => parseStealTimes('cpu  a b c d\n'), /unreadable/);
  // A kernel without the steal column (before 2.6.11) counts none.
  assert.deepEqual(parseStealTimes('cpu  10 0 5 85 0 0 0\n'), { steal: 0, total: 100 });
});

test('spread: coefficient of variation of the rounds in percent', () => {
  assert.equal(spreadPercent([100, 100, 100]), 0);
  assert.equal(spreadPercent([90, 110]), 10);
  assert.throws(() => spreadPercent([100]), /two rounds/);
  assert.throws(() => spreadPercent([0, 0]), /no work/);
  assert.equal(median([5, 1, 3]), 3);
  assert.equal(median([4, 1, 3, 2]), 2.5);
});

test('the CPU block is deterministic word-like text that deflate can shrink', async () => {
  const { deflateSync } = await import('node:zlib');
  const a = benchBlock(64 * 1024);
  assert.deepEqual(a, benchBlock(64 * 1024));
  const ratio = a.length / deflateSync(a).length;
  assert.ok(ratio > 2 && ratio < 20, `ratio ${ratio}`);
});

/** A worker runner that answers from a table: `rate` MB/s per thread, without doing the work. */
function fakeRunner(rate: (task: string, thread: number, round: number) => number) {
  const calls: { task: string; threads: number; rounds: number; roundMs: number }[] = [];
  const run: CpuRunner = async (req, threads) => {
    calls.push({ task: req.task, threads, rounds: req.rounds, roundMs: req.roundMs });
    return Array.from({ length: threads }, (_, t) => ({
      bytes: Array.from({ length: req.rounds }, (_, r) => rate(req.task, t, r) * 1000 * req.roundMs),
      ms: Array.from({ length: req.rounds }, () => req.roundMs),
    }));
  };
  return { run, calls };
}

test('cpu: one core, deflate, then every thread at once; all-core is the sum of the threads', async () => {
  const { run, calls } = fakeRunner((task) => (task === 'sha256' ? 500 : 40));
  const lines: string[] = [];
  const m = await measureCpu({ run, threads: 4, windowMs: 10_000, signal: never, log: (l) => lines.push(l) });
  assert.deepEqual(m, { single_mb_s: 500, multi_mb_s: 2000, threads: 4, compress_mb_s: 40 });
  assert.deepEqual(
    calls.map((c) => [c.task, c.threads]),
    [
      ['sha256', 1],
      ['deflate', 1],
      ['sha256', 4],
    ],
  );
  assert.ok(calls.reduce((a, c) => a + c.roundMs * c.rounds, 0) <= 10_000, 'the rounds fit the window');
  assert.match(lines.join('\n'), /cpu: SHA-256 500 MB\/s on one core, 2000 MB\/s on 4 thread\(s\) at once \(×4\.00\)/);
  const many = await measureCpu({ run, threads: 500, windowMs: 1000, signal: never, log: () => {} });
  assert.equal(many.threads, MAX_THREADS);
});

test('stability: repeated single-core rounds give the spread', async () => {
  const { run, calls } = fakeRunner((_task, _t, round) => (round % 2 ? 110 : 90));
  const spread = await measureCpuSpread({ run, windowMs: 4000, signal: never, log: () => {} });
  assert.equal(spread, 10);
  assert.equal(calls[0]!.rounds, STABILITY_ROUNDS);
  assert.equal(calls[0]!.threads, 1);
});

test('disk budget: at most max_disk_mb and never more than 10% of the free space, in whole MiB', () => {
  assert.equal(diskBudgetBytes(256, 100_000 * MiB), 256 * MiB);
  assert.equal(diskBudgetBytes(256, 1000 * MiB), 100 * MiB);
  assert.equal(diskBudgetBytes(256, 45 * MiB + 7), 4 * MiB);
});

function benchDir() {
  const path = mkdtempSync(join(tmpdir(), 'palisade-bench-disk-'));
  return { path, files: () => readdirSync(path), remove: () => rmSync(path, { recursive: true, force: true }) };
}

test('disk: writes at most 10% of the free space, reads it back, random sync writes, and removes its file', async () => {
  const dir = benchDir();
  try {
    const lines: string[] = [];
    const clock = steppingClock(1);
    const m = await measureDisk({
      dir: dir.path,
      maxDiskMb: 256,
      statfs: async () => ({ totalBytes: 1000 * MiB, freeBytes: 60 * MiB, availBytes: 60 * MiB }),
      now: clock.now,
      windowMs: 1000,
      signal: never,
      log: (l) => lines.push(l),
    });
    assert.ok(m.seq_write_mb_s > 0 && m.seq_read_mb_s > 0 && m.rand_write_iops > 0, JSON.stringify(m));
    assert.match(lines[0]!, /wrote 6 MB with fsync .* read 6 MB back .* at most 6 MB of 60 MB free/);
    assert.deepEqual(dir.files(), [], 'the temp file is gone');
  } finally {
    dir.remove();
  }
});

test('disk: too little free space, an unusable directory and an abort all leave nothing behind', async () => {
  const dir = benchDir();
  try {
    const base = {
      dir: dir.path,
      maxDiskMb: 256,
      statfs: async () => ({ totalBytes: 1000 * MiB, freeBytes: 30 * MiB, availBytes: 30 * MiB }),
      now: steppingClock(1).now,
      windowMs: 1000,
      signal: never,
      log: () => {},
    };
    await assert.rejects(measureDisk(base), /only 30 MB free in .*needs 4 MB/);
    const roomy = { ...base, statfs: async () => ({ totalBytes: 1e12, freeBytes: 1e12, availBytes: 1e12 }) };
    await assert.rejects(
      measureDisk({ ...roomy, dir: join(dir.path, 'missing') }),
      /cannot write a temp file in .*ENOENT/,
    );
    await assert.rejects(
      measureDisk({ ...roomy, statfs: async () => Promise.reject(Object.assign(new Error('x'), { code: 'EACCES' })) }),
      /cannot see the free space .*EACCES.*bench\.dir/,
    );
    const controller = new AbortController();
    controller.abort(new Error('time share used up'));
    await assert.rejects(measureDisk({ ...roomy, maxDiskMb: 8, signal: controller.signal }), /time share used up/);
    assert.deepEqual(dir.files(), []);
  } finally {
    dir.remove();
  }
});

/** A console link on a fake clock: each transfer "takes" bytes ÷ rate. */
function fakeLink(clock: { advance(ms: number): void }, mbitS: number, rttMs: number) {
  const sizes: number[] = [];
  const link: NetworkLink = {
    async ping() {
      clock.advance(rttMs);
    },
    async download(bytes) {
      sizes.push(bytes);
      clock.advance((bytes * 8) / 1000 / mbitS);
      return bytes;
    },
    async upload(payload) {
      sizes.push(payload.length);
      clock.advance((payload.length * 8) / 1000 / mbitS);
    },
  };
  return { link, sizes };
}

test('network: median round trip, and the best rate of growing payloads within the window', async () => {
  const clock = steppingClock(0);
  const { link, sizes } = fakeLink(clock, 800, 2);
  const lines: string[] = [];
  const m = await measureNetwork({ link, now: clock.now, windowMs: 60_000, signal: never, log: (l) => lines.push(l) });
  assert.equal(m.latency_ms, 2);
  assert.ok(Math.abs(m.down_mbit_s - 800) < 1e-6 && Math.abs(m.up_mbit_s - 800) < 1e-6, JSON.stringify(m));
  assert.ok(Math.max(...sizes) <= PAYLOAD_MAX, 'never more than the console accepts');
  assert.deepEqual(sizes.slice(0, 4), [MiB, 4 * MiB, 16 * MiB, 32 * MiB]);
  assert.match(lines[0]!, /network: 800 Mbit\/s console → agent/);

  const slow = steppingClock(0);
  const tight = fakeLink(slow, 2, 50);
  const small = await measureNetwork({ link: tight.link, now: slow.now, windowMs: 5000, signal: never, log: () => {} });
  assert.deepEqual(tight.sizes, [MiB, MiB], 'a slow link stops after the first payload each way');
  assert.ok(small.down_mbit_s > 0);
});
