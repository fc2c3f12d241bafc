import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalizeFingerprint, parseAgentUrl } from '../src/agent-address.js';

test('agent addresses: http or https, a host, a port 1-65535, nothing else', () => {
  for (const good of [
    'http://203.0.113.7:9100',
    'https://agent.example.com',
    'http://[::1]:9740',
    'https://[2001:db8::1]:1/base/',
    'http://host:65535',
  ]) {
    assert.equal(parseAgentUrl(` ${good} `), good, good);
  }
  for (const bad of [
    'http://[::1',
    'http://host:99999',
    'http://host:65536',
    'http://host:0',
    'http://host:',
    'http://host:08080',
    'http://',
    'ftp://x',
    'javascript:alert(1)',
    'http://user:pw@host',
    'http://host/?q=1',
    'http://host/#x',
    'http://ho st',
    'http:\\\\host',
    `http://${'a'.repeat(2048)}`,
  ]) {
    assert.equal(parseAgentUrl(bad), null, bad);
  }
});

test('fingerprints: colon pairs or plain hex, any case, one canonical form', () => {
  const canonical = Array.from({ length: 32 }, (_, i) => (i * 7).toString(16).padStart(2, '0').toUpperCase()).join(':');
  assert.equal(normalizeFingerprint(canonical), canonical);
  assert.equal(normalizeFingerprint(canonical.toLowerCase()), canonical);
  assert.equal(normalizeFingerprint(canonical.replaceAll(':', '').toLowerCase()), canonical);
  assert.equal(normalizeFingerprint(` ${canonical} `), canonical);
  for (const bad of [
    '',
    'AB:CD',
    `${canonical}:00`,
    canonical.replaceAll(':', ' '),
    canonical.replace('0', 'G'),
    `sha256:${canonical}`,
  ]) {
    assert.equal(normalizeFingerprint(bad), null, bad);
  }
});
