import type { Worker } from 'node:worker_threads';
import type { CpuRoundsRequest, CpuRoundsResult } from './cpu-work.js';
import { benchBlock, mbPerS } from './cpu-work.js';
import { type CpuWorkerData, cpuWorkerSource } from './cpu-worker.js';
import { spreadPercent } from './steal.js';
import { type BenchLog, type CpuMeasurement, fmt } from './types.js';

/** Runs the same rounds on `threads` workers at once and returns each worker's result. */
export type CpuRunner = (req: CpuRoundsRequest, threads: number, signal: AbortSignal) => Promise<CpuRoundsResult[]>;

/** Never more workers than this, whatever the core count (each worker is a V8 isolate). */
export const MAX_THREADS = 64;

function nextMessage<T>(worker: Worker): Promise<T> {
  return new Promise((resolve, reject) => {
    const done = () => {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    };
    const onMessage = (m: T) => {
      done();
      resolve(m);
    };
    const onError = (err: Error) => {
      done();
      reject(err);
    };
    const onExit = () => {
      done();
      reject(new Error('a benchmark worker stopped'));
    };
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
  });
}

/**
 * Worker threads, one per requested thread, so the daemon's event loop (and its HTTP API) keeps
 * answering. Every worker is started and warmed before any is given work, so the rounds overlap.
 */
export const workerCpuRunner: CpuRunner = async (req, threads, signal) => {
  signal.throwIfAborted();
  const workerData: CpuWorkerData = { block: benchBlock(1 << 20) };
  const workers = Array.from(
    { length: threads },
    () =>
      // Loaded here, not at the top: in the one-file bundle a static import would load it in every daemon.
      new (process.getBuiltinModule('node:worker_threads').Worker)(cpuWorkerSource, {
        eval: true,
        workerData,
        resourceLimits: { maxOldGenerationSizeMb: 32 },
        stdout: false,
        stderr: false,
      }),
  );
  const stop = () => {
    for (const w of workers) void w.terminate();
  };
  signal.addEventListener('abort', stop, { once: true });
  try {
    await Promise.all(workers.map((w) => nextMessage<'ready'>(w)));
    signal.throwIfAborted();
    const results = workers.map((w) => nextMessage<CpuRoundsResult>(w));
    for (const w of workers) w.postMessage(req);
    return await Promise.all(results);
  } finally {
    signal.removeEventListener('abort', stop);
    stop();
  }
};

export interface CpuSectionOptions {
  run: CpuRunner;
  threads: number;
  /** Working time the section may plan for. */
  windowMs: number;
  signal: AbortSignal;
  log: BenchLog;
}

/** SHA-256 on one core, deflate on one core, then SHA-256 on every core at once. */
export async function measureCpu(o: CpuSectionOptions): Promise<CpuMeasurement> {
  const threads = Math.max(1, Math.min(MAX_THREADS, o.threads));
  const [single] = await o.run({ task: 'sha256', rounds: 1, roundMs: 0.3 * o.windowMs }, 1, o.signal);
  const [compress] = await o.run({ task: 'deflate', rounds: 1, roundMs: 0.15 * o.windowMs }, 1, o.signal);
  const all = await o.run({ task: 'sha256', rounds: 1, roundMs: 0.3 * o.windowMs }, threads, o.signal);
  const single_mb_s = mbPerS(single!.bytes[0]!, single!.ms[0]!);
  const compress_mb_s = mbPerS(compress!.bytes[0]!, compress!.ms[0]!);
  const multi_mb_s = all.reduce((sum, r) => sum + mbPerS(r.bytes[0]!, r.ms[0]!), 0);
  o.log(
    `cpu: SHA-256 ${fmt(single_mb_s)} MB/s on one core, ${fmt(multi_mb_s)} MB/s on ${threads} thread(s) at once (×${(multi_mb_s / single_mb_s).toFixed(2)}); deflate ${fmt(compress_mb_s)} MB/s on one core`,
  );
  return { single_mb_s, multi_mb_s, threads, compress_mb_s };
}

export const STABILITY_ROUNDS = 8;

/** Repeated single-core SHA-256 rounds: how much they differ from each other. */
export async function measureCpuSpread(o: Omit<CpuSectionOptions, 'threads'>): Promise<number> {
  const roundMs = (0.8 * o.windowMs) / STABILITY_ROUNDS;
  const [result] = await o.run({ task: 'sha256', rounds: STABILITY_ROUNDS, roundMs }, 1, o.signal);
  const rates = result!.bytes.map((b, i) => mbPerS(b, result!.ms[i]!));
  const spread = spreadPercent(rates);
  o.log(
    `stability: ${STABILITY_ROUNDS} SHA-256 rounds of ${Math.round(roundMs)} ms, ${fmt(Math.min(...rates))} to ${fmt(Math.max(...rates))} MB/s, spread ${spread.toFixed(2)} %`,
  );
  return spread;
}
