import { createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { closeSync, constants, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { RELEASE_KEY_PATTERN } from '@palisade/protocol/enrolment';
import { AppError } from './errors.js';

/**
 * Signed releases (docs/decisions.md, "Signed releases"): `npm run package -- --sign-key FILE`
 * writes SHA256SUMS.sig (the raw 64-byte Ed25519 signature of SHA256SUMS) and release.pub (the
 * public key, RELEASE_KEY_PATTERN) beside the artifacts. The private key never sits on the console.
 */
export const RELEASE_SIGNATURE = 'SHA256SUMS.sig';
export const RELEASE_PUBLIC_KEY = 'release.pub';

/** The key an Ed25519 public KeyObject is, as the install line carries it: its 32 raw bytes in base64. */
export function releaseKeyText(key: KeyObject): string {
  const jwk = key.export({ format: 'jwk' });
  return Buffer.from(jwk.x!, 'base64url').toString('base64');
}

/**
 * The release public key of the artifacts in `dir`, or null when they are unsigned (no signature or
 * no key beside them). A release.pub that is not such a key is an error naming it, not "unsigned".
 */
export function readReleaseKey(dir: string): string | null {
  const pub = join(dir, RELEASE_PUBLIC_KEY);
  if (!existsSync(join(dir, RELEASE_SIGNATURE)) || !existsSync(pub)) return null;
  const key = readFileSync(pub, 'utf8').trim();
  if (!RELEASE_KEY_PATTERN.test(key)) {
    throw new AppError(
      500,
      `${pub}: expected an Ed25519 public key in base64 (44 characters), as npm run package writes it`,
    );
  }
  return key;
}

/**
 * `palisade-console release-key new --out FILE`: a new Ed25519 release key. The private key (PKCS#8
 * PEM) goes to FILE, made new with mode 0600: an existing file or a link there is refused, never
 * replaced or followed. Returns the public key, which the operator may publish.
 */
export function newReleaseKey(out: string): string {
  const { privateKey } = generateKeyPairSync('ed25519');
  let fd: number;
  try {
    fd = openSync(out, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ELOOP') {
      throw new AppError(400, `--out: ${out} already exists (a release key is never overwritten): choose a new file`);
    }
    throw new AppError(400, `--out: cannot create ${out}: ${(err as Error).message}`);
  }
  try {
    writeSync(fd, privateKey.export({ format: 'pem', type: 'pkcs8' }) as string);
  } finally {
    closeSync(fd);
  }
  return releaseKeyText(createPublicKey(privateKey));
}

/** An agent version as a release names it: 0.2.0 or 0.2.0-rc.1 (scripts/package.mjs checks the same form). */
export const AGENT_VERSION_PATTERN = /^\d{1,6}\.\d{1,6}\.\d{1,6}(-[0-9A-Za-z.]{1,32})?$/;

/** The most of SHA256SUMS read for its version (a release lists a handful of files). */
const SUMS_MAX_BYTES = 64 * 1024;

/**
 * The agent version of the release in `dir` (docs/decisions.md, "The served agent version"): the
 * `<v>` of the `palisade-agent-<v>-linux-x64` line in SHA256SUMS (or, in a release built without the
 * executable, of `palisade-agent-<v>.mjs`), checked against AGENT_VERSION_PATTERN; `fallback` (the
 * console's own version) when there is no SHA256SUMS or no such line, so the install routes say
 * what is missing as before.
 */
export function servedAgentVersion(dir: string, fallback: string): { version: string; listed: boolean } {
  const sums = join(dir, 'SHA256SUMS');
  let text: string;
  try {
    text = readFileSync(sums, 'utf8');
  } catch {
    return { version: fallback, listed: false };
  }
  const lines = text.slice(0, SUMS_MAX_BYTES).split('\n');
  for (const pattern of [
    /^[0-9a-f]{64} {2}palisade-agent-(\S+)-linux-x64$/,
    /^[0-9a-f]{64} {2}palisade-agent-(\S+)\.mjs$/,
  ]) {
    for (const line of lines) {
      const m = pattern.exec(line.trimEnd());
      if (m && AGENT_VERSION_PATTERN.test(m[1]!)) return { version: m[1]!, listed: true };
    }
  }
  return { version: fallback, listed: false };
}
