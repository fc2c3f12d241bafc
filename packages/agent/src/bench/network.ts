import { type BenchLog, fmt, type NetworkMeasurement } from './types.js';

/** The console endpoints of the network section (served by the console for the run). */
export interface NetworkLink {
  ping(signal: AbortSignal): Promise<void>;
  /** Downloads `bytes` random bytes; resolves with how many arrived. */
  download(bytes: number, signal: AbortSignal): Promise<number>;
  upload(payload: Buffer, signal: AbortSignal): Promise<void>;
}

const MiB = 1024 * 1024;
/** The console serves and accepts at most this much per request. */
export const PAYLOAD_MAX = 32 * MiB;
const PINGS = 15;

export interface NetworkSectionOptions {
  link: NetworkLink;
  now(): number;
  windowMs: number;
  signal: AbortSignal;
  log: BenchLog;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * Transfers growing payloads (1, 4, 16, 32 MiB) while the next one is expected to fit the
 * window, and keeps the best rate in Mbit/s; small transfers mostly measure the round trip.
 */
async function bestRate(
  o: NetworkSectionOptions,
  windowMs: number,
  transfer: (bytes: number) => Promise<number>,
): Promise<{ mbitS: number; bytes: number }> {
  const start = o.now();
  let best = { mbitS: 0, bytes: 0 };
  for (let size = MiB; ; size = Math.min(PAYLOAD_MAX, size * 4)) {
    o.signal.throwIfAborted();
    const t0 = o.now();
    const moved = await transfer(size);
    const ms = o.now() - t0;
    const mbitS = ms > 0 ? (moved * 8) / 1000 / ms : 0;
    if (mbitS > best.mbitS) best = { mbitS, bytes: moved };
    const left = windowMs - (o.now() - start);
    const nextSize = Math.min(PAYLOAD_MAX, size * 4);
    if (size === PAYLOAD_MAX || left <= 0 || (ms * nextSize) / size > left) break;
  }
  return best;
}

/** Median round trip of small requests, then console → agent and agent → console throughput. */
export async function measureNetwork(o: NetworkSectionOptions): Promise<NetworkMeasurement> {
  await o.link.ping(o.signal); // opens the connection; not counted
  const trips: number[] = [];
  const pingStart = o.now();
  while (trips.length < PINGS && (trips.length < 3 || o.now() - pingStart < 0.15 * o.windowMs)) {
    o.signal.throwIfAborted();
    const t0 = o.now();
    await o.link.ping(o.signal);
    trips.push(o.now() - t0);
  }
  const latency_ms = Math.max(0.001, median(trips));
  const down = await bestRate(o, 0.4 * o.windowMs, (bytes) => o.link.download(bytes, o.signal));
  let payload: Buffer | null = null;
  const up = await bestRate(o, 0.4 * o.windowMs, async (bytes) => {
    payload ??= Buffer.alloc(PAYLOAD_MAX, 0x5a);
    await o.link.upload(payload.subarray(0, bytes), o.signal);
    return bytes;
  });
  o.log(
    `network: ${fmt(down.mbitS)} Mbit/s console → agent (best of up to ${down.bytes / MiB} MiB), ${fmt(up.mbitS)} Mbit/s agent → console, median round trip ${latency_ms.toFixed(2)} ms of ${trips.length}`,
  );
  return { down_mbit_s: down.mbitS, up_mbit_s: up.mbitS, latency_ms };
}
