import { chmodSync, chownSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

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

/**
 * Writes a file whole or not at all (temp file + rename), with the given mode. Root writing into a
 * directory another user owns (`sudo palisade-agent key` beside a daemon running as
 * palisade-agent, docs/agent.md#install) gives the file to that user, so the daemon can still read it.
 */
export function writeFileAtomic(path: string, data: string, mode = 0o600): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode });
  chmodSync(tmp, mode);
  if (process.getuid?.() === 0) {
    const owner = statSync(dirname(path));
    if (owner.uid !== 0) chownSync(tmp, owner.uid, owner.gid);
  }
  renameSync(tmp, path);
}

/** Reads a JSON file; null when it does not exist. */
export function readJsonFile<T>(path: string): T | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
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
