// The root updater's reads and writes in <state-dir>/update/, a directory the agent's user owns
// (docs/agent.md, "The root updater"). Root opens the directory once without following a link and
// from then on names every file through that open descriptor (/proc/self/fd/N/name), so the agent's
// user cannot swap the directory for a link between a check and a use; each file is opened with
// O_NOFOLLOW (a link there is refused), must be a regular file and is read with a size cap; root's
// own files are made new under a random name (O_EXCL) and renamed into place.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import {
  UPDATE_HEALTH_TIMEOUT_MAX_S,
  UPDATE_HEALTH_TIMEOUT_MIN_S,
  type UpdateRequestFile,
} from '@palisade/protocol/agent-update';

const { O_RDONLY, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY, O_CREAT, O_EXCL, O_WRONLY } = constants;

/** A check that failed before anything changed: the result is `failed` with this message. */
export class UpdateRefused extends Error {}

/** The versions a release can carry (scripts/package.mjs makes no other). */
export const UPDATE_VERSION_PATTERN = /^\d+\.\d+\.\d+(-[0-9A-Za-z.]{1,32})?$/;

/** A directory opened without following a link; files in it are named through the descriptor. */
export interface OpenDir {
  fd: number;
  path: string;
  uid: number;
  gid: number;
  /** The name of `file` inside the opened directory, whatever happens to its path later. */
  at(file: string): string;
  close(): void;
}

/** Opens `path` as a directory, refusing a link or a directory anyone but its owner can write. */
export function openDirNoFollow(path: string): OpenDir {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENOTDIR')
      throw new UpdateRefused(`${path} is not a directory (a link or a file)`);
    throw err;
  }
  const st = fstatSync(fd);
  if ((st.mode & 0o022) !== 0) {
    closeSync(fd);
    throw new UpdateRefused(
      `${path} is writable by users other than its owner (mode ${(st.mode & 0o7777).toString(8)})`,
    );
  }
  return {
    fd,
    path,
    uid: st.uid,
    gid: st.gid,
    at: (file) => `/proc/self/fd/${fd}/${file}`,
    close: () => closeSync(fd),
  };
}

/** Opens a regular file in `dir` for reading, never through a link (nor blocking on a FIFO). */
export function openRegular(dir: OpenDir, file: string, cap: number): { fd: number; size: number } {
  let fd: number;
  try {
    fd = openSync(dir.at(file), O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw new UpdateRefused(`${dir.path}/${file} is a symbolic link: refused`);
    if (code === 'ENOENT') throw new UpdateRefused(`${dir.path}/${file} is missing`);
    throw new UpdateRefused(`${dir.path}/${file} cannot be read: ${(err as Error).message}`);
  }
  const st = fstatSync(fd);
  if (!st.isFile()) {
    closeSync(fd);
    throw new UpdateRefused(`${dir.path}/${file} is not a regular file: refused`);
  }
  if (st.size > cap) {
    closeSync(fd);
    throw new UpdateRefused(`${dir.path}/${file} is larger than ${cap} bytes: refused`);
  }
  return { fd, size: st.size };
}

/** A small file in `dir`, whole, at most `cap` bytes. */
export function readCapped(dir: OpenDir, file: string, cap: number): Buffer {
  const { fd } = openRegular(dir, file, cap);
  try {
    const buf = Buffer.alloc(cap + 1);
    let length = 0;
    for (;;) {
      const n = readSync(fd, buf, length, buf.length - length, null);
      if (n === 0) break;
      length += n;
      if (length > cap) throw new UpdateRefused(`${dir.path}/${file} is larger than ${cap} bytes: refused`);
    }
    return buf.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

/** Whether `file` exists in `dir` (as anything: a link counts, and is refused when read). */
export function existsIn(dir: OpenDir, file: string): boolean {
  try {
    closeSync(openSync(dir.at(file), O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
  return true;
}

/** Removes the name `file` in `dir` (a link is removed, never its target); nothing when absent. */
export function removeIn(dir: OpenDir, file: string): void {
  rmSync(dir.at(file), { force: true });
}

/**
 * Writes `file` in `dir` whole: a new file under a random name (O_CREAT|O_EXCL|O_NOFOLLOW), mode
 * and owner set on the descriptor, synced, renamed over the name. `owner` null keeps it root's;
 * otherwise it goes to the directory's owner, so the agent can read and remove it.
 */
export function writeIn(dir: OpenDir, file: string, data: string, mode: number, giveToOwner: boolean): void {
  const tmp = `.${file}.${randomBytes(8).toString('hex')}.tmp`;
  const fd = openSync(dir.at(tmp), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    try {
      writeSync(fd, data);
      fchmodSync(fd, mode);
      if (giveToOwner && process.getuid?.() === 0) fchownSync(fd, dir.uid, dir.gid);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(dir.at(tmp), dir.at(file));
  } catch (err) {
    rmSync(dir.at(tmp), { force: true });
    throw err;
  }
}

/** The artifact names a release has for `version`: the single executable and the one-file bundle. */
export const artifactNames = (version: string) => [
  `palisade-agent-${version}-linux-x64`,
  `palisade-agent-${version}.mjs`,
];

/** request.json, every field checked; an error names the field and what was expected. */
export function parseUpdateRequest(text: string): UpdateRequestFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new UpdateRefused('request.json is not valid JSON');
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new UpdateRefused('request.json: expected an object');
  const r = raw as Record<string, unknown>;
  const { rollout_id, version, artifact, sha256, health_timeout_s, requested_at } = r;
  if (typeof rollout_id !== 'number' || !Number.isSafeInteger(rollout_id) || rollout_id < 1)
    throw new UpdateRefused('request.json: rollout_id: expected a positive whole number');
  if (typeof version !== 'string' || !UPDATE_VERSION_PATTERN.test(version))
    throw new UpdateRefused('request.json: version: expected a version such as 0.2.0 or 0.2.0-rc.1');
  if (typeof artifact !== 'string' || !artifactNames(version).includes(artifact))
    throw new UpdateRefused(`request.json: artifact: expected ${artifactNames(version).join(' or ')}`);
  if (typeof sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(sha256))
    throw new UpdateRefused('request.json: sha256: expected 64 lowercase hex digits');
  if (
    typeof health_timeout_s !== 'number' ||
    !Number.isInteger(health_timeout_s) ||
    health_timeout_s < UPDATE_HEALTH_TIMEOUT_MIN_S ||
    health_timeout_s > UPDATE_HEALTH_TIMEOUT_MAX_S
  )
    throw new UpdateRefused(
      `request.json: health_timeout_s: expected whole seconds from ${UPDATE_HEALTH_TIMEOUT_MIN_S} to ${UPDATE_HEALTH_TIMEOUT_MAX_S}`,
    );
  if (typeof requested_at !== 'number' || !Number.isFinite(requested_at) || requested_at < 0)
    throw new UpdateRefused('request.json: requested_at: expected a time in milliseconds');
  return { rollout_id, version, artifact, sha256, health_timeout_s, requested_at };
}

/** The SHA-256 SHA256SUMS gives `file` (`<hex>  <name>` lines), or null. */
export function sumFor(sums: string, file: string): string | null {
  for (const line of sums.split('\n')) {
    const m = /^([0-9a-f]{64}) [ *](\S+)$/.exec(line.trim());
    if (m && m[2] === file) return m[1]!;
  }
  return null;
}
