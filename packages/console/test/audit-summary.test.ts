import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AUDIT_SUMMARY_MAX } from '@palisade/protocol';
import { auditSummary } from '../src/services/audit.service.js';

// What the audit log keeps of a change: enough to read, never a secret (docs/protection.md, "Audit log").
describe('auditSummary', () => {
  const body = (value: unknown) => Buffer.from(JSON.stringify(value));

  test('a body and a query as they came, in one line', () => {
    assert.equal(
      auditSummary('', body({ ip: '203.0.113.9', note: 'scanner' })),
      '{"ip":"203.0.113.9","note":"scanner"}',
    );
    assert.equal(auditSummary('ip=203.0.113.9', undefined), 'ip=203.0.113.9');
    assert.equal(auditSummary('', undefined), '(no body)');
  });

  test('secrets never reach the log: secret-looking keys hidden, URLs cut to their origin', () => {
    const text = auditSummary(
      'token=abc',
      body({
        alerter: { url: 'https://hooks.example.com/services/T000/B000/XXXXSECRET', secret: 's3cr3t' },
        api_key: 'agk_0123',
        Authorization: 'Bearer x',
        target: 'https://user:pw@example.com/',
      }),
    );
    for (const secret of ['abc', 'XXXXSECRET', 's3cr3t', 'agk_0123', 'Bearer', 'user:pw'])
      assert.ok(!text.includes(secret), `${secret} in ${text}`);
    assert.match(text, /https:\/\/hooks\.example\.com\/…/);
    assert.match(text, /"secret":"\[hidden\]"/);
    assert.match(text, /^token=\[hidden\] /);
  });

  test('long values, long lists and bodies that are not JSON are cut, and the line has a bound', () => {
    assert.match(auditSummary('', body({ note: 'x'.repeat(300) })), /"x{120}…"/);
    assert.match(auditSummary('', body(Array.from({ length: 25 }, (_, i) => `10.0.0.${i}`))), /"… 15 more"\]$/);
    assert.equal(auditSummary('', Buffer.from('1.2.3.4\n5.6.7.8')), '(15 bytes, not JSON)');
    const huge = auditSummary(
      '',
      body(Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}`, 'v'.repeat(50)]))),
    );
    assert.equal(huge.length, AUDIT_SUMMARY_MAX);
    assert.ok(huge.endsWith('…'));
  });
});
