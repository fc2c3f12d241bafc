// Follows the log files of block patterns. Only regular files are read: opening a FIFO waits for a
// writer and a device can answer forever, either of which would stall the daemon. Every call is
// asynchronous, so a slow file system holds a thread-pool thread, never the event loop.
import { constants, type Stats } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';

/** Longer lines are cut to this many characters before a regex sees them (docs/protection.md). */
export const MAX_LINE = 4096;
/** At most this much of a file is read per poll; the rest waits for the next one. */
const MAX_READ = 1 << 20;
const OPEN_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;

function kind(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

const notRegular = (path: string, st: Stats) =>
  `${path} is ${kind(st)}, not a regular file; only regular files are tailed`;

/**
 * Why `path` cannot be tailed, or null when it can (or does not exist yet: a log may appear later).
 * Checked with stat first, so nothing but a regular file is ever opened, then again on the open
 * handle (non-blocking), in case the path was swapped in between.
 */
export async function untailable(path: string): Promise<string | null> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch {
    return null;
  }
  if (!st.isFile()) return notRegular(path, st);
  let fh: FileHandle;
  try {
    fh = await open(path, OPEN_FLAGS);
  } catch {
    return null;
  }
  try {
    const opened = await fh.stat();
    return opened.isFile() ? null : notRegular(path, opened);
  } finally {
    await fh.close();
  }
}

/**
 * Follows one log file by polling: new lines since the last poll, across rotation (a new inode:
 * the rest of the old file is read first) and truncation (the size shrank: read from the start).
 * A file present at the first poll is read from its end; one that appears later, from its start.
 */
export class FileTail {
  private fh: FileHandle | null = null;
  private ino = 0;
  private pos = 0;
  private partial = '';
  private first = true;
  private busy = false;
  private closed = false;
  error: string | null = null;

  /** `onError` hears each new problem once (not on every poll while it lasts). */
  constructor(
    readonly path: string,
    private readonly onError: (message: string) => void = () => {},
  ) {}

  /** The complete lines written since the last poll; null while the previous poll is still running. */
  async poll(): Promise<string[] | null> {
    if (this.busy || this.closed) return null;
    this.busy = true;
    try {
      return await this.read();
    } finally {
      this.busy = false;
      if (this.closed) await this.release();
    }
  }

  private fail(message: string) {
    if (message !== this.error) this.onError(message);
    this.error = message;
  }

  private async read(): Promise<string[]> {
    const lines: string[] = [];
    let st: Stats | null = null;
    let problem: string | null = null;
    try {
      st = await stat(this.path);
      if (!st.isFile()) {
        problem = notRegular(this.path, st);
        st = null;
      }
    } catch (err) {
      problem = `cannot read ${this.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
    }
    if (this.fh && (!st || st.ino !== this.ino)) {
      await this.drain(lines);
      await this.release();
    }
    if (!st) {
      this.first = false;
      this.fail(problem!);
      return lines;
    }
    if (!this.fh) {
      let fh: FileHandle;
      try {
        fh = await open(this.path, OPEN_FLAGS);
      } catch (err) {
        this.fail(`cannot open ${this.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        return lines;
      }
      const opened = await fh.stat();
      if (!opened.isFile()) {
        await fh.close();
        this.first = false;
        this.fail(notRegular(this.path, opened));
        return lines;
      }
      this.fh = fh;
      this.ino = opened.ino;
      this.pos = this.first ? opened.size : 0;
      this.partial = '';
    }
    this.first = false;
    this.error = null;
    await this.drain(lines);
    return lines;
  }

  private async drain(lines: string[]) {
    if (!this.fh) return;
    const size = (await this.fh.stat()).size;
    if (size < this.pos) {
      this.pos = 0;
      this.partial = '';
    }
    let budget = MAX_READ;
    while (this.pos < size && budget > 0) {
      const buf = Buffer.allocUnsafe(Math.min(64 * 1024, size - this.pos, budget));
      const { bytesRead: n } = await this.fh.read(buf, 0, buf.length, this.pos);
      if (n <= 0) break;
      this.pos += n;
      budget -= n;
      const parts = (this.partial + buf.toString('utf8', 0, n)).split('\n');
      const rest = parts.pop() ?? '';
      // A line without an end yet keeps only its first MAX_LINE characters, so memory stays bounded.
      this.partial = rest.length > MAX_LINE ? rest.slice(0, MAX_LINE) : rest;
      for (const p of parts) if (p !== '') lines.push(p.length > MAX_LINE ? p.slice(0, MAX_LINE) : p);
    }
  }

  private async release() {
    const fh = this.fh;
    this.fh = null;
    await fh?.close().catch(() => {});
  }

  /** Stops following; a poll still running closes the file when it ends. */
  close(): void {
    this.closed = true;
    if (!this.busy) void this.release();
  }
}
