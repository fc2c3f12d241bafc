// `palisade-console release-key new`: the release private key for `npm run package --sign-key`,
// written new with mode 0600 and never over an existing file or through a link.
import assert from 'node:assert/strict';
import { createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { existsSync, lstatSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ED25519_SPKI_PREFIX_B64, RELEASE_KEY_PATTERN } from '@palisade/protocol/enrolment';
import { tempDir } from '@palisade/testkit';
import { runConsoleCli } from './console-process.js';

test('release-key new writes an Ed25519 private key 0600 and prints its public key', async (t) => {
  const dir = tempDir();
  t.after(() => dir.remove());
  const out = join(dir.path, 'release.key');
  const res = await runConsoleCli({}, ['release-key', 'new', '--out', out]);
  assert.equal(res.code, 0, res.out);
  assert.equal((lstatSync(out).mode & 0o777).toString(8), '600');
  const privateKey = createPrivateKey(readFileSync(out));
  assert.equal(privateKey.asymmetricKeyType, 'ed25519');
  const printed = /Public key: (\S+)/.exec(res.out)?.[1] ?? '';
  assert.match(printed, RELEASE_KEY_PATTERN);
  assert.ok(!res.out.includes('PRIVATE KEY'), 'the private key is never printed');
  // The printed key is the one that checks this private key's signatures.
  const pub = createPublicKey(
    `-----BEGIN PUBLIC KEY-----\n${ED25519_SPKI_PREFIX_B64}${printed}\n-----END PUBLIC KEY-----\n`,
  );
  const data = Buffer.from('SHA256SUMS');
  assert.ok(verify(null, data, pub, sign(null, data, privateKey)));
});

test('release-key new refuses an existing file and a link, changing neither', async (t) => {
  const dir = tempDir();
  t.after(() => dir.remove());
  const existing = join(dir.path, 'existing.key');
  writeFileSync(existing, 'an older key\n');
  const again = await runConsoleCli({}, ['release-key', 'new', '--out', existing]);
  assert.equal(again.code, 1, again.out);
  assert.match(again.out, /--out: .*existing\.key already exists/);
  assert.equal(readFileSync(existing, 'utf8'), 'an older key\n');

  // A link to a file that is not there yet: following it would create the target.
  const target = join(dir.path, 'elsewhere');
  const link = join(dir.path, 'link.key');
  symlinkSync(target, link);
  const linked = await runConsoleCli({}, ['release-key', 'new', '--out', link]);
  assert.equal(linked.code, 1, linked.out);
  assert.match(linked.out, /--out: .*link\.key already exists/);
  assert.ok(!existsSync(target), 'nothing written through the link');
  assert.ok(lstatSync(link).isSymbolicLink());

  const missing = await runConsoleCli({}, ['release-key', 'new']);
  assert.notEqual(missing.code, 0);
  assert.match(missing.out, /required option '--out <file>'/);
});
