import assert from 'node:assert/strict';
import { test } from 'node:test';
import { signRequest, svc1BodyHash, svc1Payload, svc1Signature, verifySignature } from '../src/svc1.js';

const KEY = 'svck_testkey';

test('the payload is four lines without a trailing newline; the query string is not signed', () => {
  assert.equal(
    svc1Payload('1700000000', 'get', '/api/tickets?status=open', 'abc'),
    '1700000000\nGET\n/api/tickets\nabc',
  );
  assert.equal(svc1BodyHash(''), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
});

test('signRequest and verifySignature agree, and any change breaks the signature', () => {
  const body = '{"a": 1}';
  const headers = signRequest({
    key: KEY,
    method: 'POST',
    path: '/api/tickets',
    body,
    timestamp: 1_700_000_000,
    nonce: 'n1',
  });
  assert.equal(headers['x-svc-signature-version'], '1');
  assert.equal(headers['x-svc-nonce'], 'n1');
  const input = {
    key: KEY,
    signature: headers['x-svc-signature']!,
    timestamp: '1700000000',
    method: 'POST',
    path: '/api/tickets',
    body,
  };
  assert.ok(verifySignature(input));
  assert.equal(verifySignature({ ...input, body: '{"a":1}' }), false, 're-serialized');
  assert.equal(verifySignature({ ...input, key: `${KEY}x` }), false);
  assert.equal(verifySignature({ ...input, timestamp: '1700000001' }), false);
  assert.equal(verifySignature({ ...input, method: 'GET' }), false);
  assert.equal(verifySignature({ ...input, path: '/api/tickets/1' }), false);
  assert.equal(verifySignature({ ...input, signature: input.signature.toUpperCase() }), false, 'lower-case hex only');
  assert.equal(verifySignature({ ...input, signature: '' }), false);
});

test('an empty body verifies with the empty-string hash or an empty fourth line', () => {
  const hashed = svc1Signature(KEY, svc1Payload('1', 'GET', '/x', svc1BodyHash('')));
  const blank = svc1Signature(KEY, svc1Payload('1', 'GET', '/x', ''));
  for (const signature of [hashed, blank]) {
    assert.ok(verifySignature({ key: KEY, signature, timestamp: '1', method: 'GET', path: '/x' }));
  }
  assert.equal(
    verifySignature({ key: KEY, signature: blank, timestamp: '1', method: 'POST', path: '/x', body: 'x' }),
    false,
  );
});
