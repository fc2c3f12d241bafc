import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AlertRule } from '@palisade/protocol';
import { attentionOf, DEFAULT_LIMITS, heat, limitsFor } from '../src/lib/attention';

const rule = (over: Partial<AlertRule>): AlertRule => ({
  id: 1,
  name: 'r',
  kind: 'metric',
  metric: 'cpu',
  threshold: 80,
  minutes: 5,
  repeat_minutes: 60,
  server_ids: null,
  tags: null,
  channel_ids: [],
  enabled: true,
  created_at: 0,
  ...over,
});

describe('which servers need attention (lib/attention.ts)', () => {
  test('limits: the lowest enabled metric rule covering the server, 90 % without one', () => {
    const web = { id: 7, tags: ['web'] };
    assert.deepEqual(limitsFor(web, []), DEFAULT_LIMITS);
    const rules = [
      rule({ threshold: 80 }),
      rule({ id: 2, threshold: 70, tags: ['web'] }),
      rule({ id: 3, threshold: 50, server_ids: [8] }),
      rule({ id: 4, threshold: 40, enabled: false }),
      rule({ id: 5, metric: 'disk', threshold: 95, tags: ['web'] }),
      rule({ id: 6, kind: 'score', metric: null, threshold: 300 }),
      rule({ id: 7, metric: 'load', threshold: 1 }),
    ];
    assert.deepEqual(limitsFor(web, rules), { cpu: 70, memory: 90, disk: 95 });
    assert.deepEqual(limitsFor({ id: 8, tags: [] }, rules), { cpu: 50, memory: 90, disk: 90 });
  });

  test('heat: hot at or past the limit, warm within 10 points, nothing for unknown figures', () => {
    assert.equal(heat(90, 90), 'hot');
    assert.equal(heat(98.9, 90), 'hot');
    assert.equal(heat(80, 90), 'warm');
    assert.equal(heat(79.9, 90), null);
    assert.equal(heat(null, 90), null);
    assert.equal(heat(Number.NaN, 90), null);
  });

  test('rank: under attack, unreachable, offline, hot, late, fine', () => {
    const fine = { state: 'online' as const, attacks_active: 0 };
    assert.equal(attentionOf({ ...fine, attacks_active: 2 }, {}, DEFAULT_LIMITS), 'under attack');
    assert.equal(attentionOf({ ...fine, state: 'unreachable' }, {}, DEFAULT_LIMITS), 'unreachable');
    assert.equal(attentionOf({ ...fine, state: 'offline' }, { cpu: 99 }, DEFAULT_LIMITS), 'offline');
    assert.equal(attentionOf(fine, { disk: 97.5 }, DEFAULT_LIMITS), 'hot');
    assert.equal(attentionOf({ ...fine, state: 'late' }, { cpu: 10 }, DEFAULT_LIMITS), 'late');
    assert.equal(attentionOf(fine, { cpu: 89, memory: 50 }, DEFAULT_LIMITS), 'fine');
    assert.equal(attentionOf({ ...fine, attacks_active: null }, {}, DEFAULT_LIMITS), 'fine');
  });
});
