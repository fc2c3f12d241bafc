import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateToken, hashToken, isWellFormedToken, safeEqual, tokenLast4 } from '../src/tokens.js';

test('generated tokens carry their prefix, 32 random characters and a valid checksum', () => {
  const token = generateToken('personal');
  assert.match(token, /^svc_[0-9A-Za-z]{38}$/);
  assert.ok(isWellFormedToken('personal', token));
  assert.notEqual(generateToken('personal'), token);
});

test('a single mistyped character fails the checksum', () => {
  const token = generateToken('signingKey');
  const i = 10;
  const swapped = token.slice(0, i) + (token[i] === 'a' ? 'b' : 'a') + token.slice(i + 1);
  assert.equal(isWellFormedToken('signingKey', swapped), false);
});

test('wrong prefix, short, non-base62 and empty values are rejected', () => {
  const token = generateToken('personal');
  assert.equal(isWellFormedToken('signingKey', token), false);
  assert.equal(isWellFormedToken('personal', 'svc_abc'), false);
  assert.equal(isWellFormedToken('personal', `${token.slice(0, -1)}!`), false);
  assert.equal(isWellFormedToken('personal', ''), false);
});

test('hash is hex SHA-256 and last4 is the tail', () => {
  const token = generateToken('daemon');
  assert.match(hashToken(token), /^[0-9a-f]{64}$/);
  assert.equal(tokenLast4(token), token.slice(-4));
});

test('safeEqual compares values of any length', () => {
  assert.ok(safeEqual('abc', 'abc'));
  assert.equal(safeEqual('abc', 'abd'), false);
  assert.equal(safeEqual('abc', 'abcd'), false);
  assert.equal(safeEqual('', ''), true);
});
