import { execFile } from 'node:child_process';
import { closeSync, fchmodSync, fsyncSync } from 'node:fs';
import { join } from 'node:path';
import {
  UPDATE_RESULT_FILE,
  type UpdateOffer,
  type UpdateReport,
  type UpdateRequestFile,
} from '@palisade/protocol/agent-update';
import { getToFile } from '../lib/outbound.js';
import { PINNED_RELEASE_KEY, releasePublicKey, verifyRelease } from '../release.js';
import { writeFileAtomic } from '../state/state-dir.js';
import { type AgentForm, exeArtifact, mjsArtifact } from './offer.js';
import { oneLine } from './reports.js';
import {
  createExclusive,
  ensureUpdateDir,
  readSmallFile,
  removeLeftovers,
  UPDATE_REPORT_FILE,
  type UpdatePaths,
} from './update-files.js';

/** The largest artifact the agent downloads (the executable is about 90 MB). */
export const MAX_ARTIFACT_BYTES = 256 * 1024 * 1024;
const MAX_SUMS_BYTES = 64 * 1024;
const MAX_SIGNATURE_BYTES = 1024;
/** A download fails when the console sends nothing for this long. */
const DOWNLOAD_IDLE_MS = 60_000;
/** The downloaded artifact's `--version` must answer within this. */
export const VERSION_CHECK_MS = 15_000;

export const FROM_CHECKOUT = 'this agent runs from a source checkout: update it with git and npm';

export interface TakeOfferContext {
  paths: UpdatePaths;
  /** The console this agent checks in with; the files come from its `/install/`. */
  consoleUrl: string;
  /** The pinned release public key (PEM or base64); `run --release-key-file` names another. */
  releaseKeyFile: string;
  form: AgentForm;
  clock: () => number;
  log: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** Told when the download starts, so `downloading` is reported while it runs. */
  started?: () => void;
}

/** Why an offer was refused: reported as `failed` with this one line. */
class Refused extends Error {}

/**
 * Takes an offer up to the hand-over (docs/agent.md, "The agent's part"): downloads SHA256SUMS,
 * its signature and the artifact for how this agent runs into the update directory, checks the
 * signature against the pinned key, the artifact's SHA-256 against the signed sums, and that the
 * artifact says it is the offered version; then writes request.json for the root updater. Returns
 * the report: `applying`, or `failed` with the reason (and then no request.json is written).
 */
export async function takeOffer(offer: UpdateOffer, ctx: TakeOfferContext): Promise<UpdateReport> {
  const report = (state: UpdateReport['state'], reason: string | null): UpdateReport => ({
    rollout_id: offer.rollout_id,
    version: offer.version,
    state,
    reason,
  });
  try {
    const request = await prepare(offer, ctx);
    writeFileAtomic(ctx.paths.request, `${JSON.stringify(request)}\n`, 0o600);
    ctx.log(
      'info',
      `update to ${offer.version}: verified and handed to the root updater (rollout ${offer.rollout_id})`,
    );
    return report('applying', null);
  } catch (err) {
    const reason = oneLine(
      err instanceof Refused ? err.message : `update to ${offer.version}: ${(err as Error).message}`,
    );
    ctx.log('warn', `update refused: ${reason}`);
    return report('failed', reason);
  }
}

async function prepare(offer: UpdateOffer, ctx: TakeOfferContext): Promise<UpdateRequestFile> {
  const { paths, form } = ctx;
  if (form.kind === 'checkout') throw new Refused(FROM_CHECKOUT);
  const key = pinnedKey(ctx.releaseKeyFile);
  const artifact = form.kind === 'exe' ? exeArtifact(offer.version) : mjsArtifact(offer.version);
  const artifactPath = form.kind === 'exe' ? offer.exe_path : offer.mjs_path;

  ensureUpdateDir(paths.dir);
  // The report and root's result wait for a check-in: they stay.
  removeLeftovers(paths.dir, [UPDATE_REPORT_FILE, UPDATE_RESULT_FILE]);
  ctx.started?.();
  ctx.log('info', `update to ${offer.version} offered (rollout ${offer.rollout_id}): downloading ${artifact}`);

  await download(ctx, offer.sums_path, paths.sums, MAX_SUMS_BYTES);
  await download(ctx, offer.signature_path, paths.signature, MAX_SIGNATURE_BYTES);
  const sums = readSmallFile(paths.sums, MAX_SUMS_BYTES)!;
  const signature = readSmallFile(paths.signature, MAX_SIGNATURE_BYTES)!;
  if (!verifyRelease(sums, signature, key))
    throw new Refused('the signature of SHA256SUMS does not verify against the pinned release key');
  const expected = sumOf(sums.toString('utf8'), artifact);
  if (expected === null) throw new Refused(`the signed SHA256SUMS has no line for ${artifact}`);

  const file = join(paths.dir, artifact);
  const got = await download(ctx, artifactPath, file, MAX_ARTIFACT_BYTES, form.kind === 'exe' ? 0o700 : 0o600);
  if (got.sha256 !== expected)
    throw new Refused(
      `the SHA-256 of ${artifact} (${got.sha256}) is not the one in the signed SHA256SUMS (${expected})`,
    );

  const printed = await versionOf(form.kind === 'exe' ? [file] : [process.execPath, file]);
  if (printed !== offer.version)
    throw new Refused(`${artifact} --version printed ${JSON.stringify(printed.slice(0, 40))}, not ${offer.version}`);

  return {
    rollout_id: offer.rollout_id,
    version: offer.version,
    artifact,
    sha256: expected,
    health_timeout_s: offer.health_timeout_s,
    requested_at: ctx.clock(),
  };
}

/** The pinned key; no key pinned refuses every update (agents take signed releases only). */
function pinnedKey(file: string) {
  let text: Buffer | null;
  try {
    text = readSmallFile(file, 4096);
  } catch (err) {
    throw new Refused(`the pinned release key ${file} cannot be read: ${(err as Error).message}`);
  }
  if (text === null) {
    const hint =
      file === PINNED_RELEASE_KEY ? 'run the install line with --release-key' : `put the release key in ${file}`;
    throw new Refused(`no release key is pinned (${file}): updates from the console need a signed release; ${hint}`);
  }
  try {
    return releasePublicKey(text.toString('utf8'));
  } catch (err) {
    throw new Refused(`the pinned release key ${file}: ${(err as Error).message}`);
  }
}

/** Downloads one `/install/` file from the console into a new file (0600 unless `mode`); returns its size and SHA-256. */
async function download(ctx: TakeOfferContext, path: string, file: string, maxBytes: number, mode = 0o600) {
  const fd = createExclusive(file, 0o600);
  try {
    const got = await getToFile(`${ctx.consoleUrl}${path}`, fd, maxBytes, DOWNLOAD_IDLE_MS);
    if (mode !== 0o600) fchmodSync(fd, mode);
    fsyncSync(fd);
    return got;
  } finally {
    closeSync(fd);
  }
}

/** The hex SHA-256 of `name` in a SHA256SUMS text (`<hex>  <name>`, or `<hex> *<name>`); null when it has no such line. */
export function sumOf(sums: string, name: string): string | null {
  let found: string | null = null;
  for (const line of sums.split('\n')) {
    const m = /^([0-9a-f]{64}) [ *](.+)$/.exec(line.trimEnd());
    if (m && m[2] === name) {
      if (found !== null && found !== m[1]) return null;
      found = m[1]!;
    }
  }
  return found;
}

/** What `<artifact> --version` prints (trimmed), within VERSION_CHECK_MS; the error says how it failed. */
function versionOf(command: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      command[0]!,
      [...command.slice(1), '--version'],
      { timeout: VERSION_CHECK_MS, maxBuffer: 64 * 1024, encoding: 'utf8', env: { PATH: process.env.PATH ?? '' } },
      (err, stdout) => {
        if (err) {
          const why = (err as { killed?: boolean }).killed
            ? `did not answer within ${VERSION_CHECK_MS / 1000} s`
            : `failed (${err.message.split('\n')[0]})`;
          reject(new Refused(`the downloaded agent's --version ${why}`));
        } else resolve(stdout.trim());
      },
    );
  });
}
