import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';
import {
  UPDATE_CHECKED_IN_FILE,
  UPDATE_DIR,
  UPDATE_REQUEST_FILE,
  UPDATE_RESULT_FILE,
} from '@palisade/protocol/agent-update';

/** The agent's pending report, kept so it survives a restart (docs/agent.md, "The agent's part"). */
export const UPDATE_REPORT_FILE = 'report.json';
/** SHA256SUMS as downloaded, and its signature: the root updater checks them again. */
export const SUMS_FILE = 'SHA256SUMS';
export const SIGNATURE_FILE = 'SHA256SUMS.sig';

/** Where each file between the agent and the root updater lies inside `<state-dir>/update/`. */
export function updatePaths(stateDir: string) {
  const dir = join(stateDir, UPDATE_DIR);
  return {
    dir,
    request: join(dir, UPDATE_REQUEST_FILE),
    result: join(dir, UPDATE_RESULT_FILE),
    checkedIn: join(dir, UPDATE_CHECKED_IN_FILE),
    report: join(dir, UPDATE_REPORT_FILE),
    sums: join(dir, SUMS_FILE),
    signature: join(dir, SIGNATURE_FILE),
  };
}
export type UpdatePaths = ReturnType<typeof updatePaths>;

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_RDONLY, O_WRONLY } = constants;

/** The update directory, made 0700; a link or a file in its place is refused, never followed. */
export function ensureUpdateDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const st = lstatSync(dir);
  if (st.isSymbolicLink() || !st.isDirectory()) throw new Error(`${dir} is not a directory; remove it`);
  if ((st.mode & 0o077) !== 0)
    throw new Error(`${dir} is open to other users (mode ${(st.mode & 0o777).toString(8)}); chmod 700 it`);
}

/** A new file, 0600, never through a link nor over a file already there; returns its descriptor. */
export function createExclusive(path: string, mode = 0o600): number {
  return openSync(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
}

/** Removes every file in the update directory but `keep`: what an earlier offer left. */
export function removeLeftovers(dir: string, keep: readonly string[]): void {
  for (const name of readdirSync(dir)) {
    if (!keep.includes(name)) rmSync(join(dir, name), { recursive: true, force: true });
  }
}

/**
 * A small file read whole, never through a link and only when it is a regular file of at most
 * `maxBytes`; null when it does not exist. The update directory is the agent's user's, and root
 * writes result.json into it: the size and type are checked on the open descriptor.
 */
export function readSmallFile(path: string, maxBytes: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new Error(`${path} is a symbolic link; remove it`);
    throw err;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new Error(`${path} is not a regular file`);
    if (st.size > maxBytes) throw new Error(`${path} is larger than ${maxBytes} bytes`);
    const buf = Buffer.alloc(maxBytes + 1);
    let filled = 0;
    for (;;) {
      const n = readSync(fd, buf, filled, buf.length - filled, null);
      if (n === 0) break;
      filled += n;
      if (filled > maxBytes) throw new Error(`${path} is larger than ${maxBytes} bytes`);
    }
    return buf.subarray(0, filled);
  } finally {
    closeSync(fd);
  }
}

/** A small JSON object file, or null when absent; anything that is not one is an error naming the file. */
export function readJsonObject(path: string, maxBytes = 4096): Record<string, unknown> | null {
  const buf = readSmallFile(path, maxBytes);
  if (buf === null) return null;
  let value: unknown;
  try {
    value = JSON.parse(buf.toString('utf8'));
  } catch {
    throw new Error(`${path} is not valid JSON`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw new Error(`${path} is not a JSON object`);
  return value as Record<string, unknown>;
}

/** Whether `path` exists (as anything, a link included), without following it. */
export function present(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}
