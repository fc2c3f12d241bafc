import assert from 'node:assert/strict';
import { test } from 'node:test';
import { base32Decode, base32Encode, matchTotp, totpCode, totpStep, totpUri } from '../src/totp.js';

// RFC 6238 appendix B, SHA-1 seed "12345678901234567890"; the last 6 of the 8 digits given there.
const SEED = base32Encode(Buffer.from('12345678901234567890'));
const VECTORS: [number, string][] = [
  [59, '287082'],
  [1111111109, '081804'],
  [1111111111, '050471'],
  [1234567890, '005924'],
  [2000000000, '279037'],
];

test('codes match the RFC 6238 test vectors', () => {
  for (const [seconds, code] of VECTORS) assert.equal(totpCode(SEED, totpStep(seconds * 1000)), code, `T=${seconds}`);
});

test('base32 round-trips and reads lower case and spaces', () => {
  const bytes = Buffer.from([0, 1, 2, 250, 251, 252, 253, 254, 255, 7]);
  assert.deepEqual(base32Decode(base32Encode(bytes)), bytes);
  assert.equal(base32Encode(Buffer.from('12345678901234567890')), 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ');
  assert.deepEqual(base32Decode('gezd gnbv'), base32Decode('GEZDGNBV'));
  assert.throws(() => base32Decode('not-base32!'));
});

test('a code is taken one step either side of now and no further', () => {
  const now = 1234567890_000;
  const step = totpStep(now);
  assert.equal(matchTotp(SEED, totpCode(SEED, step), now), step);
  assert.equal(matchTotp(SEED, totpCode(SEED, step - 1), now), step - 1);
  assert.equal(matchTotp(SEED, totpCode(SEED, step + 1), now), step + 1);
  assert.equal(matchTotp(SEED, totpCode(SEED, step - 2), now), null);
  assert.equal(matchTotp(SEED, '12345', now), null);
  assert.equal(matchTotp(SEED, 'abcdef', now), null);
});

test('the otpauth URI carries the secret and the parameters', () => {
  const uri = new URL(totpUri('ABC', 'ada@example.com'));
  assert.equal(uri.protocol, 'otpauth:');
  assert.equal(uri.host, 'totp');
  assert.equal(decodeURIComponent(uri.pathname), '/Palisade:ada@example.com');
  assert.equal(uri.searchParams.get('secret'), 'ABC');
  assert.equal(uri.searchParams.get('digits'), '6');
  assert.equal(uri.searchParams.get('period'), '30');
  assert.equal(uri.searchParams.get('algorithm'), 'SHA1');
});
