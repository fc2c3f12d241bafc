// The agent's release check (verify-release): SHA256SUMS is trusted only with the pinned release
// key's Ed25519 signature; a changed byte in the sums or the signature, or another key, is refused.
import assert from 'node:assert/strict';
import { generateKeyPairSync, sign } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { releasePublicKey, verifyRelease } from '../src/release.js';
import { runCli, tempDir } from './agent-process.js';

const base64Key = (key: ReturnType<typeof generateKeyPairSync>['publicKey']) =>
  Buffer.from(key.export({ format: 'jwk' }).x!, 'base64url').toString('base64');

const release = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const sums = Buffer.from(`${'a'.repeat(64)}  palisade-agent_1.0.0_amd64.deb\n`);
const signature = sign(null, sums, release.privateKey);

test('verifyRelease accepts the release key signature and refuses any change', () => {
  const key = base64Key(release.publicKey);
  assert.equal(verifyRelease(sums, signature, key), true);
  // The same key as pinned (PEM) verifies too.
  const pem = release.publicKey.export({ format: 'pem', type: 'spki' }) as string;
  assert.equal(verifyRelease(sums, signature, pem), true);
  assert.equal(releasePublicKey(pem).equals(releasePublicKey(key)), true);

  const tamperedSums = Buffer.from(sums.toString().replace('aaaa', 'aaab'));
  assert.equal(verifyRelease(tamperedSums, signature, key), false, 'an edited hash');
  const flipped = Buffer.from(signature);
  flipped[10]! ^= 0x01;
  assert.equal(verifyRelease(sums, flipped, key), false, 'a flipped signature byte');
  assert.equal(verifyRelease(sums, signature.subarray(0, 63), key), false, 'a short signature');
  // Re-signed with another key: a valid signature, but not the pinned key's.
  assert.equal(verifyRelease(tamperedSums, sign(null, tamperedSums, other.privateKey), key), false);
  assert.throws(() => releasePublicKey('not a key'), /release key: expected an Ed25519 public key/);
  const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ format: 'pem', type: 'spki' });
  assert.throws(() => releasePublicKey(rsa as string), /expected Ed25519, not rsa/);
});

test('palisade-agent verify-release exits 0 for the pinned key, 1 for a tampered signature or another key', async (t) => {
  const dir = tempDir();
  t.after(() => dir.remove());
  const file = (name: string, data: string | Buffer) => {
    writeFileSync(join(dir.path, name), data);
    return join(dir.path, name);
  };
  const sumsFile = file('SHA256SUMS', sums);
  const sigFile = file('SHA256SUMS.sig', signature);
  const pinned = file('release.pub', release.publicKey.export({ format: 'pem', type: 'spki' }) as string);
  /** `palisade-agent verify-release` on SHA256SUMS with `sig` and the key arguments given. */
  const check = (sig: string, ...key: string[]) => runCli(['verify-release', '--sums', sumsFile, '--sig', sig, ...key]);
  const ok = await check(sigFile, '--key-file', pinned);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /signature verified/);
  const withKey = await check(sigFile, '--key', base64Key(release.publicKey));
  assert.equal(withKey.code, 0, withKey.stderr);

  const flipped = Buffer.from(signature);
  flipped[0]! ^= 0x80;
  const bad = await check(file('bad.sig', flipped), '--key-file', pinned);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /is not the release key's signature of .*SHA256SUMS: refused/);
  const otherKey = await check(sigFile, '--key', base64Key(other.publicKey));
  assert.equal(otherKey.code, 1);
  const garbage = await check(sigFile, '--key', 'xyz');
  assert.equal(garbage.code, 1);
  assert.match(garbage.stderr, /release key: expected an Ed25519 public key/);
});
