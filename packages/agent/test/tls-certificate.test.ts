import assert from 'node:assert/strict';
import { test } from 'node:test';
import { derInteger } from '../src/state/tls-certificate.js';

const hex = (b: Buffer) => b.toString('hex');

test('DER integers are minimal: no leading zero byte unless the high bit needs one', () => {
  // A 16-byte serial that starts with 0x00 (1 start in 256) must lose that byte, or OpenSSL
  // refuses the whole certificate with "illegal padding".
  assert.equal(hex(derInteger(Buffer.from('007f01', 'hex'))), '02027f01');
  assert.equal(hex(derInteger(Buffer.from('00007f', 'hex'))), '02017f');
  assert.equal(hex(derInteger(Buffer.from('0080', 'hex'))), '02020080');
  assert.equal(hex(derInteger(Buffer.from('80', 'hex'))), '02020080');
  assert.equal(hex(derInteger(Buffer.from('02', 'hex'))), '020102');
  assert.equal(hex(derInteger(Buffer.from('00', 'hex'))), '020100');
  assert.equal(hex(derInteger(Buffer.from('0000', 'hex'))), '020100');
});
