import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { healthTimeoutSeconds, minutesText, reachText, servers } from '../src/features/agent-updates/rollout-text';

/** The agent-updates page's form checks and words (docs/dashboard.md, "Agent updates"). */
describe('agent updates: the rollout form', () => {
  test('the health timeout is minutes from 0.5 to 60, sent as seconds', () => {
    assert.deepEqual(healthTimeoutSeconds('10'), { seconds: 600 });
    assert.deepEqual(healthTimeoutSeconds('0.5'), { seconds: 30 });
    assert.deepEqual(healthTimeoutSeconds(' 60 '), { seconds: 3600 });
    assert.deepEqual(healthTimeoutSeconds('2.25'), { seconds: 135 });
    for (const bad of ['', '0', '0.4', '61', '-5', '1e3', 'ten', '10 min'])
      assert.deepEqual(
        healthTimeoutSeconds(bad),
        { error: 'health timeout: expected minutes from 0.5 to 60' },
        `"${bad}" is refused`,
      );
  });

  test('each wave reaches as far as the console counts, cumulatively', () => {
    assert.equal(reachText('1,10%,100%', 25), 'wave 1: 1 server, wave 2: 3, wave 3: 25');
    assert.equal(reachText('2,10%,100%', 200), 'wave 1: 2 servers, wave 2: 20, wave 3: 200');
    // 100% is added when missing; a wave always reaches one server further than the one before.
    assert.equal(reachText('1,1', 5), 'wave 1: 1 server, wave 2: 2, wave 3: 5');
    assert.equal(reachText('5', 3), 'wave 1: 3 servers, wave 2: 3');
    assert.equal(reachText('1,abc', 10), null, 'waves that do not parse have no reach');
    assert.equal(reachText('1,10%,100%', 0), null, 'nor do no servers');
  });

  test('times and counts in words', () => {
    assert.equal(minutesText(600), '10 min');
    assert.equal(minutesText(90), '1 min 30 s');
    assert.equal(minutesText(30), '30 s');
    assert.equal(servers(1), '1 server');
    assert.equal(servers(0), '0 servers');
  });
});
