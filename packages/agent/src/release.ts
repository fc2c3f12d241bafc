import { createPublicKey, type KeyObject, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ED25519_SPKI_PREFIX_B64, RELEASE_KEY_PATTERN } from '@palisade/protocol/enrolment';

/** Where the install script pins the release public key (PEM), root's, 0644 (docs/agent.md, "Signed releases"). */
export const PINNED_RELEASE_KEY = '/etc/palisade/release.pub';

/** A release public key from its base64 form (as the install line carries it) or its PEM (as pinned). */
export function releasePublicKey(text: string): KeyObject {
  const trimmed = text.trim();
  const pem = RELEASE_KEY_PATTERN.test(trimmed)
    ? `-----BEGIN PUBLIC KEY-----\n${ED25519_SPKI_PREFIX_B64}${trimmed}\n-----END PUBLIC KEY-----\n`
    : trimmed;
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new Error('release key: expected an Ed25519 public key (44 base64 characters, or a PEM public key)');
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw new Error(`release key: expected Ed25519, not ${key.asymmetricKeyType}`);
  return key;
}

/**
 * Whether `signature` is the release key's Ed25519 signature of SHA256SUMS (`sums`, its bytes as
 * served). Any update path checks this before it trusts a sum in SHA256SUMS, then the artifact's sum.
 */
export function verifyRelease(sums: Buffer, signature: Buffer, key: KeyObject | string): boolean {
  const publicKey = typeof key === 'string' ? releasePublicKey(key) : key;
  if (signature.length !== 64) return false;
  return verify(null, sums, publicKey, signature);
}

/** `palisade-agent verify-release`: the same check on files, for the install script where openssl cannot. */
export function verifyReleaseFiles(o: { sums: string; sig: string; key?: string; keyFile: string }): boolean {
  const key = o.key ?? readFileSync(o.keyFile, 'utf8');
  return verifyRelease(readFileSync(o.sums), readFileSync(o.sig), key);
}
