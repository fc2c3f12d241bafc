// The root updater (docs/agent.md, "The root updater"): takes the request the unprivileged agent
// left in <state-dir>/update/, checks it all again with the key root pinned, keeps the previous
// executable, swaps, restarts the agent and waits for it to check in on the new version; puts the
// previous one back by itself when it does not within health_timeout_s, or exits 3 times in 60 s.
// `palisade-agent apply-update` (a systemd path unit starts it) and `palisade-agent supervise`
// (hosts without systemd) both run `applyUpdate`, each with its own way to restart the agent.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import {
  UPDATE_CHECKED_IN_FILE,
  UPDATE_DIR,
  UPDATE_REQUEST_FILE,
  UPDATE_RESULT_FILE,
  type UpdateRequestFile,
  type UpdateResultFile,
} from '@palisade/protocol/agent-update';
import { PINNED_RELEASE_KEY, releasePublicKey, verifyRelease } from '../release.js';
import { unsafeForRoot } from '../state/state-dir.js';
import {
  existsIn,
  type OpenDir,
  openDirNoFollow,
  openRegular,
  parseUpdateRequest,
  readCapped,
  removeIn,
  sumFor,
  UPDATE_VERSION_PATTERN,
  UpdateRefused,
  writeIn,
} from './apply-files.js';

const { O_CREAT, O_EXCL, O_NOFOLLOW, O_WRONLY, O_RDONLY } = constants;

/** Size caps on what the agent's user wrote: request, SHA256SUMS, signature, the artifact. */
const REQUEST_CAP = 4096;
const SUMS_CAP = 64 * 1024;
const SIG_CAP = 1024;
const ARTIFACT_CAP = 512 * 1024 * 1024;
const CHECKED_IN_CAP = 4096;
/** A crash loop: this many exits of the new version within CRASH_WINDOW_MS. */
export const CRASH_EXITS = 3;
export const CRASH_WINDOW_MS = 60_000;

/** How the agent is restarted and how its exits are seen: systemd, or the supervisor's own child. */
export interface AgentControl {
  /** Stops the agent and starts it again from the executable now at `bin`. */
  restart(): Promise<void>;
  /** The agent's exits seen so far (time, "exit code N" or "signal S"), and why it is down for good, if it is. */
  exits(): Promise<{ exits: { at: number; how: string }[]; stopped: string | null }>;
}

export interface ApplyOptions {
  stateDir: string;
  /** The executable to replace (the agent runs from it). */
  bin: string;
  /** The release key root pinned; never a path from the agent's config. */
  releaseKeyFile: string;
  control: AgentControl;
  log: (line: string) => void;
  /** How often the check-in and exits are looked at while waiting (ms). */
  pollMs?: number;
}

/** The executable this process runs from: the single executable, or the one-file bundle Node runs. */
export function runningExecutable(): string {
  return process.getBuiltinModule('node:sea').isSea() ? process.execPath : resolve(process.argv[1] ?? '');
}

/** How to run the executable at `bin`: itself, or Node with the bundle. */
export const commandFor = (bin: string, args: string[]): [string, string[]] =>
  bin.endsWith('.mjs') || bin.endsWith('.js') ? [process.execPath, [bin, ...args]] : [bin, args];

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The verified artifact, copied into a private directory beside `bin`. */
interface Staged {
  tmpDir: string;
  copy: string;
}

function readPinnedKey(file: string): string {
  let fd: number;
  try {
    fd = openSync(file, O_RDONLY | O_NOFOLLOW);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      throw new UpdateRefused(
        `no pinned release key at ${file}: updates are verified with it (the install line pins it)`,
      );
    if (code === 'ELOOP')
      throw new UpdateRefused(`${file} is a symbolic link: the release key is never read through one`);
    throw new UpdateRefused(`${file} cannot be read: ${(err as Error).message}`);
  }
  try {
    return readFileSync(fd, 'utf8').slice(0, 4096);
  } finally {
    closeSync(fd);
  }
}

/** Checks the signature, the sum and the version, and copies the artifact next to `bin`. */
function stage(dir: OpenDir, request: UpdateRequestFile, o: ApplyOptions): Staged {
  const keyText = readPinnedKey(o.releaseKeyFile);
  const sums = readCapped(dir, 'SHA256SUMS', SUMS_CAP);
  const sig = readCapped(dir, 'SHA256SUMS.sig', SIG_CAP);
  let key: ReturnType<typeof releasePublicKey>;
  try {
    key = releasePublicKey(keyText);
  } catch (err) {
    throw new UpdateRefused(`${o.releaseKeyFile}: ${(err as Error).message}`);
  }
  if (!verifyRelease(sums, sig, key))
    throw new UpdateRefused(
      `SHA256SUMS.sig is not the pinned release key's signature of SHA256SUMS (${o.releaseKeyFile}): refused`,
    );
  const expected = sumFor(sums.toString('utf8'), request.artifact);
  if (expected === null) throw new UpdateRefused(`the signed SHA256SUMS has no line for ${request.artifact}`);
  if (expected !== request.sha256)
    throw new UpdateRefused(`request.json's sha256 for ${request.artifact} is not the one in the signed SHA256SUMS`);
  const bundle = o.bin.endsWith('.mjs') || o.bin.endsWith('.js');
  if (bundle !== request.artifact.endsWith('.mjs'))
    throw new UpdateRefused(
      `${request.artifact} does not fit ${o.bin} (the ${bundle ? 'one-file bundle' : 'single executable'} needs the ${bundle ? '.mjs' : '-linux-x64'} artifact)`,
    );
  const binDir = dirname(o.bin);
  const why = unsafeForRoot(binDir);
  if (why) throw new UpdateRefused(`the executable's directory is not safe to write as root: ${why}`);
  let binStat: ReturnType<typeof lstatSync>;
  try {
    binStat = lstatSync(o.bin);
  } catch {
    throw new UpdateRefused(`${o.bin} does not exist: nothing to update`);
  }
  if (!binStat.isFile()) throw new UpdateRefused(`${o.bin} is not a regular file (a link?): refused`);

  // A private directory of root's beside the target, so the final rename stays on one file system.
  const tmpDir = mkdtempSync(join(binDir, `.${basename(o.bin)}-update-`));
  try {
    const copy = join(tmpDir, basename(o.bin));
    const src = openRegular(dir, request.artifact, ARTIFACT_CAP);
    const hash = createHash('sha256');
    try {
      const out = openSync(copy, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o700);
      try {
        const buf = Buffer.alloc(1024 * 1024);
        let total = 0;
        for (;;) {
          const n = readSync(src.fd, buf, 0, buf.length, null);
          if (n === 0) break;
          total += n;
          if (total > ARTIFACT_CAP) throw new UpdateRefused(`${request.artifact} is larger than ${ARTIFACT_CAP} bytes`);
          hash.update(buf.subarray(0, n));
          writeSync(out, buf, 0, n);
        }
        fchmodSync(out, 0o755);
        fsyncSync(out);
      } finally {
        closeSync(out);
      }
    } finally {
      closeSync(src.fd);
    }
    const actual = hash.digest('hex');
    if (actual !== expected)
      throw new UpdateRefused(
        `${request.artifact}'s SHA-256 is ${actual}, the signed SHA256SUMS says ${expected}: refused`,
      );
    const [cmd, args] = commandFor(copy, ['--version']);
    const ran = spawnSync(cmd, args, { encoding: 'utf8', timeout: 30_000, stdio: ['ignore', 'pipe', 'pipe'] });
    const printed = (ran.stdout ?? '').trim();
    if (ran.status !== 0 || printed !== request.version)
      throw new UpdateRefused(
        `${request.artifact} --version printed "${printed.slice(0, 60)}"${ran.status !== 0 ? ` and exited ${ran.status ?? ran.signal}` : ''}, not ${request.version}: refused`,
      );
    return { tmpDir, copy };
  } catch (err) {
    rmSync(tmpDir, { recursive: true, force: true });
    throw err;
  }
}

/** The rollout and version a request names, each only when well-formed (else 0 and ''). */
function requestNames(text: string): { rollout_id: number; version: string } {
  try {
    const raw = JSON.parse(text) as { rollout_id?: unknown; version?: unknown };
    const id = raw.rollout_id;
    const version = raw.version;
    return {
      rollout_id: typeof id === 'number' && Number.isSafeInteger(id) && id > 0 ? id : 0,
      version: typeof version === 'string' && UPDATE_VERSION_PATTERN.test(version) ? version : '',
    };
  } catch {
    return { rollout_id: 0, version: '' };
  }
}

/** Whether the new agent wrote checked-in.json naming `version`. */
function checkedIn(dir: OpenDir, version: string): boolean {
  try {
    const file = JSON.parse(readCapped(dir, UPDATE_CHECKED_IN_FILE, CHECKED_IN_CAP).toString('utf8')) as unknown;
    return (
      typeof file === 'object' &&
      file !== null &&
      (file as { version?: unknown }).version === version &&
      typeof (file as { pid?: unknown }).pid === 'number'
    );
  } catch {
    return false;
  }
}

/** Waits for the new version to check in; answers why not (then it is rolled back), or null. */
async function watch(dir: OpenDir, request: UpdateRequestFile, o: ApplyOptions, since: number): Promise<string | null> {
  const deadline = since + request.health_timeout_s * 1000;
  const name = `palisade-agent ${request.version}`;
  for (;;) {
    if (checkedIn(dir, request.version)) return null;
    const seen = await o.control.exits();
    if (seen.stopped) return `${name} stopped and was not restarted (${seen.stopped})`;
    const now = Date.now();
    const recent = seen.exits.filter((e) => e.at >= since && e.at >= now - CRASH_WINDOW_MS);
    if (recent.length >= CRASH_EXITS)
      return `${name} exited ${recent.length} times in ${CRASH_WINDOW_MS / 1000} s (last: ${recent[recent.length - 1]!.how})`;
    if (now >= deadline) return `${name} did not check in within ${request.health_timeout_s} s`;
    await pause(o.pollMs ?? 500);
  }
}

/**
 * Applies the request in `<stateDir>/update/`, if there is one; answers the result it wrote there
 * (or null: no request). Nothing changes unless every check passes; once swapped, the previous
 * executable comes back by itself when the new one does not check in or crashes in a loop.
 */
export async function applyUpdate(o: ApplyOptions): Promise<UpdateResultFile | null> {
  let dir: OpenDir;
  try {
    dir = openDirNoFollow(join(o.stateDir, UPDATE_DIR));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    // No safe place to answer in: said in the log, nothing changes.
    o.log(`apply-update: refused: ${(err as Error).message}`);
    return null;
  }
  try {
    if (!existsIn(dir, UPDATE_REQUEST_FILE)) return null;
    let request: UpdateRequestFile | null = null;
    /** What a refused request said of itself, when that much is well-formed: the agent matches its report by it. */
    let named: { rollout_id: number; version: string } = { rollout_id: 0, version: '' };
    const finish = (state: UpdateResultFile['state'], reason: string | null): UpdateResultFile => {
      const result: UpdateResultFile = {
        rollout_id: request?.rollout_id ?? named.rollout_id,
        version: request?.version ?? named.version,
        state,
        reason: reason === null ? null : reason.slice(0, 300),
        at: Date.now(),
      };
      writeIn(dir, UPDATE_RESULT_FILE, `${JSON.stringify(result)}\n`, 0o600, true);
      removeIn(dir, UPDATE_REQUEST_FILE);
      o.log(`apply-update: ${state}${reason ? `: ${reason}` : ''}`);
      return result;
    };

    let staged: Staged;
    try {
      const text = readCapped(dir, UPDATE_REQUEST_FILE, REQUEST_CAP).toString('utf8');
      named = requestNames(text);
      request = parseUpdateRequest(text);
      o.log(`apply-update: rollout ${request.rollout_id}: checking ${request.artifact} (${request.version})`);
      staged = stage(dir, request, o);
    } catch (err) {
      return finish(
        'failed',
        err instanceof UpdateRefused ? err.message : `could not check the update: ${(err as Error).message}`,
      );
    }

    const prev = `${o.bin}.prev`;
    try {
      const prevTmp = join(staged.tmpDir, 'prev');
      copyFileSync(o.bin, prevTmp);
      chmodSync(prevTmp, 0o755);
      renameSync(prevTmp, prev);
      renameSync(staged.copy, o.bin);
    } catch (err) {
      return finish('failed', `could not swap ${o.bin}: ${(err as Error).message}`);
    } finally {
      rmSync(staged.tmpDir, { recursive: true, force: true });
    }
    o.log(`apply-update: ${o.bin} is now ${request.version} (the previous one kept as ${prev}); restarting the agent`);

    removeIn(dir, UPDATE_CHECKED_IN_FILE);
    const since = Date.now();
    let why: string | null;
    try {
      await o.control.restart();
      o.log(`apply-update: waiting up to ${request.health_timeout_s} s for ${request.version} to check in`);
      why = await watch(dir, request, o, since);
    } catch (err) {
      why = `palisade-agent ${request.version} could not be restarted: ${(err as Error).message}`;
    }
    if (why === null) return finish('updated', null);

    o.log(`apply-update: ${why}; putting the previous executable back`);
    try {
      renameSync(prev, o.bin);
    } catch (err) {
      return finish('rolled_back', `${why}; putting ${prev} back failed: ${(err as Error).message}`);
    }
    try {
      await o.control.restart();
    } catch (err) {
      o.log(`apply-update: the previous agent could not be restarted: ${(err as Error).message}`);
    }
    return finish('rolled_back', why);
  } finally {
    dir.close();
  }
}

/** systemd as the restarter: `systemctl restart U`, exits counted from the unit's NRestarts. */
export function systemdControl(unit: string): AgentControl {
  const exits: { at: number; how: string }[] = [];
  let restarts: number | null = null;
  const show = () => {
    const res = spawnSync(
      'systemctl',
      ['show', unit, '-p', 'NRestarts', '-p', 'ExecMainStatus', '-p', 'ExecMainCode', '-p', 'ActiveState'],
      { encoding: 'utf8' },
    );
    const values: Record<string, string> = {};
    for (const line of (res.stdout ?? '').split('\n')) {
      const i = line.indexOf('=');
      if (i > 0) values[line.slice(0, i)] = line.slice(i + 1);
    }
    return values;
  };
  return {
    async restart() {
      const res = spawnSync('systemctl', ['restart', unit], { encoding: 'utf8' });
      if (res.status !== 0)
        throw new Error(`systemctl restart ${unit}: ${(res.stderr ?? '').trim() || `exit ${res.status}`}`);
      restarts = Number(show().NRestarts ?? 0);
    },
    async exits() {
      const s = show();
      const n = Number(s.NRestarts ?? 0);
      const how = `exit code ${s.ExecMainStatus ?? '?'}`;
      if (restarts !== null && n > restarts) {
        for (let i = restarts; i < n; i++) exits.push({ at: Date.now(), how });
        restarts = n;
      }
      return { exits, stopped: s.ActiveState === 'failed' ? `${unit} failed, ${how}` : null };
    },
  };
}

/** Only root swaps the executable; the check names what to do. */
export function requireRoot(command: string): void {
  if (process.getuid?.() !== 0) throw new Error(`run as root: ${command} replaces the agent's executable`);
}

export { PINNED_RELEASE_KEY };
