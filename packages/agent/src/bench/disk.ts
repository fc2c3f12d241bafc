import { randomBytes } from 'node:crypto';
import { constants, type FileHandle, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { FsUsage } from '../deps.js';
import { type BenchLog, type DiskMeasurement, fmt } from './types.js';

const MiB = 1024 * 1024;
const CHUNK = MiB;
/** fdatasync this often while writing, so one flush never holds more than this much. */
const SYNC_EVERY = 8 * MiB;
const SMALL = 4096;
/** Below this the figures mean little; the section is skipped instead. */
export const MIN_DISK_BYTES = 4 * MiB;

/** Whole MiB the section may write: at most `max_disk_mb`, and never more than 10% of the free space. */
export function diskBudgetBytes(maxDiskMb: number, availBytes: number): number {
  const bytes = Math.min(maxDiskMb * MiB, Math.floor(availBytes / 10));
  return Math.floor(bytes / MiB) * MiB;
}

export interface DiskSectionOptions {
  dir: string;
  maxDiskMb: number;
  statfs(dir: string): Promise<FsUsage>;
  /** Monotonic ms. */
  now(): number;
  windowMs: number;
  signal: AbortSignal;
  log: BenchLog;
}

/**
 * Sequential write with fsync, reading it back, then 4 KiB synchronous writes at random places of
 * the same file. The file is made fresh in `dir` (O_EXCL, 0600) and removed whatever happens.
 */
export async function measureDisk(o: DiskSectionOptions): Promise<DiskMeasurement> {
  let usage: FsUsage;
  try {
    usage = await o.statfs(o.dir);
  } catch (err) {
    throw new Error(
      `cannot see the free space of ${o.dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); set bench.dir`,
    );
  }
  const budget = diskBudgetBytes(o.maxDiskMb, usage.availBytes);
  if (budget < MIN_DISK_BYTES) {
    throw new Error(
      `only ${Math.floor(usage.availBytes / MiB)} MB free in ${o.dir}; the test writes at most 10% of the free space and needs ${MIN_DISK_BYTES / MiB} MB`,
    );
  }
  const file = join(o.dir, `.palisade-bench-${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  let handle: FileHandle | null = null;
  try {
    try {
      handle = await open(file, 'wx+', 0o600);
    } catch (err) {
      throw new Error(
        `cannot write a temp file in ${o.dir} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message}); set bench.dir`,
      );
    }
    const chunk = randomBytes(CHUNK);

    // Sequential write, flushed every SYNC_EVERY bytes and at the end; stops at the budget or the window.
    let written = 0;
    const writeStart = o.now();
    while (written + CHUNK <= budget && (written === 0 || o.now() - writeStart < 0.45 * o.windowMs)) {
      o.signal.throwIfAborted();
      await handle.write(chunk, 0, CHUNK, written);
      written += CHUNK;
      if (written % SYNC_EVERY === 0) await handle.datasync();
    }
    await handle.datasync();
    const writeMs = o.now() - writeStart;

    // Read it back from the start (much of it may still be in the page cache).
    let read = 0;
    const readStart = o.now();
    while (read < written && (read === 0 || o.now() - readStart < 0.2 * o.windowMs)) {
      o.signal.throwIfAborted();
      const { bytesRead } = await handle.read(chunk, 0, CHUNK, read);
      if (bytesRead === 0) break;
      read += bytesRead;
    }
    const readMs = o.now() - readStart;
    await handle.close();
    handle = null;

    // 4 KiB writes at random aligned places, each durable before the next (O_DSYNC where it exists).
    const dsync = constants.O_DSYNC ?? 0;
    handle = await open(file, constants.O_RDWR | dsync);
    const small = chunk.subarray(0, SMALL);
    const slots = written / SMALL;
    let writes = 0;
    const randStart = o.now();
    do {
      o.signal.throwIfAborted();
      await handle.write(small, 0, SMALL, Math.floor(Math.random() * slots) * SMALL);
      if (!dsync) await handle.datasync();
      writes++;
    } while (o.now() - randStart < 0.25 * o.windowMs);
    const randMs = o.now() - randStart;

    const result: DiskMeasurement = {
      seq_write_mb_s: rate(written, writeMs),
      seq_read_mb_s: rate(read, readMs),
      rand_write_iops: randMs > 0 ? (writes * 1000) / randMs : 0,
    };
    o.log(
      `disk: wrote ${written / MiB} MB with fsync at ${fmt(result.seq_write_mb_s)} MB/s, read ${Math.round(read / MiB)} MB back at ${fmt(result.seq_read_mb_s)} MB/s, ${writes} synchronous 4 KiB writes at ${fmt(result.rand_write_iops)} IOPS (in ${o.dir}, at most ${budget / MiB} MB of ${Math.floor(usage.availBytes / MiB)} MB free)`,
    );
    return result;
  } finally {
    await handle?.close().catch(() => {});
    await rm(file, { force: true });
  }
}

/** MB/s (10^6 bytes), as the scales use. */
function rate(bytes: number, ms: number): number {
  return ms > 0 ? bytes / 1000 / ms : 0;
}
