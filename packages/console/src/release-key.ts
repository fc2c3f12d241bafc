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
