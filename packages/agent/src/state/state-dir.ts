import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';

export const DEFAULT_STATE_DIR = '/var/lib/palisade-agent';

/** Where each piece of the agent's state lives inside `--state-dir`. */
export function statePaths(dir: string) {
  return {
    dir,
    key: join(dir, 'agent-key.json'),
    enrolment: join(dir, 'enrolment.json'),
    tlsKey: join(dir, 'tls-key.pem'),
    tlsCert: join(dir, 'tls-cert.pem'),
    pid: join(dir, 'agent.pid'),
    socket: join(dir, 'agent.sock'),
  };
}

export type StatePaths = ReturnType<typeof statePaths>;

/** Creates the state dir (mode 0700) if needed, with a message that says what went wrong. */
export function ensureStateDir(dir: string): void {
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new Error(`cannot create the state directory ${dir}: ${(err as Error).message}`);
  }
}

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY, O_RDONLY } = constants;

/**
 * Why root must not write into `dir`: a link, not a directory, or writable by a user other than
 * its owner (group or other write bits). Null when it is safe. The owner may be the agent's user:
 * every write here makes a new file under a random name it cannot have planted (O_EXCL and
 * O_NOFOLLOW), so nothing of root's is ever written, chmod'ed or chown'ed through a link.
 */
export function unsafeForRoot(dir: string): string | null {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(dir);
  } catch (err) {
    return `${dir} cannot be read: ${(err as Error).message}`;
  }
  if (st.isSymbolicLink()) return `${dir} is a symbolic link; give the real directory`;
  if (!st.isDirectory()) return `${dir} is not a directory`;
  if ((st.mode & 0o022) !== 0)
    return `${dir} is writable by users other than its owner (mode ${(st.mode & 0o7777).toString(8)}); chmod go-w it`;
  return null;
}

/**
 * Writes a file whole or not at all, with the given mode, never following a link: a new file under
 * a random name (O_CREAT|O_EXCL|O_NOFOLLOW), its mode and owner set on the open descriptor
 * (fchmod/fchown), synced, then renamed over `path` (a rename replaces a link, never its target).
 * Root writing into a directory another user owns (`sudo palisade-agent key` beside a daemon
 * running as palisade-agent, docs/agent.md#install) gives the file to that user, so the daemon can
 * still read it; root refuses a directory that is a link or writable by anyone but its owner
 * (docs/security.md, "The agent's Unix user and the firewall").
 */
export function writeFileAtomic(path: string, data: string, mode = 0o600): void {
  const dir = dirname(path);
  const root = process.getuid?.() === 0;
  let owner: { uid: number; gid: number } | null = null;
  if (root) {
    const why = unsafeForRoot(dir);
    if (why) throw new Error(`refusing to write ${path} as root: ${why}`);
    const st = lstatSync(dir);
    if (st.uid !== 0) owner = { uid: st.uid, gid: st.gid };
  }
  const tmp = join(dir, `.${basename(path)}.${randomBytes(8).toString('hex')}.tmp`);
  const fd = openSync(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, mode);
  try {
    try {
      writeSync(fd, data);
      fchmodSync(fd, mode);
      if (owner) fchownSync(fd, owner.uid, owner.gid);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** Reads a file without following a link (a link where a state file belongs is refused). */
export function readFileNoFollow(path: string): string {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP')
      throw Object.assign(new Error(`${path} is a symbolic link, not a state file; remove it`), { code: 'ELOOP' });
    throw err;
  }
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

/** Reads a state file; as root without following a link (the agent's user may have planted one). */
export function readStateFile(path: string): string {
  return process.getuid?.() === 0 ? readFileNoFollow(path) : readFileSync(path, 'utf8');
}

/** Reads a JSON file; null when it does not exist. */
export function readJsonFile<T>(path: string): T | null {
  let text: string;
  try {
    text = readStateFile(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new Error(`${path} is not valid JSON; remove it or restore it from a backup`);
  }
}
