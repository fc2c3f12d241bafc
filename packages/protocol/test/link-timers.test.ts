import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LINK_DEAD_AFTER_MS, LINK_HEARTBEAT_MS, LINK_MAX_HEARTBEATS_PER_MINUTE, linkTimers } from '../src/link.js';

test('the link timers by default are the documented 10 s heartbeat, dead after 25 s, 18 heartbeats a minute', () => {
  assert.deepEqual(linkTimers(), {
    heartbeatMs: LINK_HEARTBEAT_MS,
    deadAfterMs: LINK_DEAD_AFTER_MS,
    maxHeartbeatsPerMinute: LINK_MAX_HEARTBEATS_PER_MINUTE,
  });
  assert.deepEqual(linkTimers(10_000), { heartbeatMs: 10_000, deadAfterMs: 25_000, maxHeartbeatsPerMinute: 18 });
});

test('a shorter heartbeat keeps the proportions, within 500 ms to 10 s', () => {
  assert.deepEqual(linkTimers(2000), { heartbeatMs: 2000, deadAfterMs: 5000, maxHeartbeatsPerMinute: 90 });
  assert.deepEqual(linkTimers(500), { heartbeatMs: 500, deadAfterMs: 1250, maxHeartbeatsPerMinute: 360 });
  for (const bad of [499, 10_001, 1500.5, Number.NaN])
    assert.throws(() => linkTimers(bad), /link heartbeat: expected 500 to 10000 ms/, String(bad));
});
