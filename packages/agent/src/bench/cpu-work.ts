/** What the main thread asks a CPU worker: `rounds` rounds of `roundMs` each of one kind of work. */
export interface CpuRoundsRequest {
  task: 'sha256' | 'deflate';
  rounds: number;
  roundMs: number;
}

/** Bytes processed and the exact duration of each round. */
export interface CpuRoundsResult {
  bytes: number[];
  ms: number[];
}

/**
 * A deterministic block of word-like text: hashing does not care, and deflate gets the ratio of
 * ordinary logs and configs (about 3:1) instead of incompressible noise.
 */
export function benchBlock(size: number): Buffer {
  const words = ['palisade', 'agent', 'server', 'GET', '/index.html', '200', 'user', 'error', 'ok', '10.0.0.1'];
  const out = Buffer.alloc(size);
  let seed = 0x2545f491;
  let at = 0;
  while (at < size) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    const word = seed % 7 === 0 ? String(seed % 100_000) : words[seed % words.length]!;
    at += out.write(`${word} `, at, 'latin1');
  }
  return out;
}

/** MB/s (10^6 bytes) of a round. */
export const mbPerS = (bytes: number, ms: number) => (ms > 0 ? bytes / 1000 / ms : 0);
