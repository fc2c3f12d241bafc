import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type ScoreSample, scoreFromSamples, serverScore, WEIGHTS } from '../src/services/score.js';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);

/** Ten minutes of samples every 30 s, all alike. */
function samples(overrides: Partial<ScoreSample> = {}): ScoreSample[] {
  return Array.from({ length: 20 }, (_, i) => ({
    ts: NOW - 20_000 - i * 30_000,
    cpu_pct: 20,
    mem_used_mb: 4000,
    mem_total_mb: 8000,
    disk_used_pct: 50,
    load1: 1,
    disk_mount: '/',
    rx_pps: 600,
    tx_pps: 400,
    net_errors_ps: 0,
    ...overrides,
  }));
}

function score(list: ScoreSample[], cores = 2, lastSeen = NOW - 20_000, now = NOW) {
  return serverScore(lastSeen, scoreFromSamples(list, cores), now);
}

describe('the worked examples of docs/score.md', () => {
  test('the weights add up to 1000', () => {
    assert.equal(
      Object.values(WEIGHTS).reduce((a, b) => a + b, 0),
      1000,
    );
  });

  test('1. healthy', () => {
    const s = score(samples());
    assert.equal(s.score, 1000);
    assert.deepEqual(s.components, { cpu: 200, memory: 200, disk: 150, network: 150, stability: 150, freshness: 150 });
    assert.deepEqual(s.notes, []);
  });

  test('2. full disk', () => {
    const s = score(samples({ disk_used_pct: 93 }));
    assert.equal(s.components.disk, 42);
    assert.equal(s.score, 892);
    assert.deepEqual(s.notes, ['Disk / at 93% used']);
  });

  test('3. busy', () => {
    const s = score(samples({ cpu_pct: 85, mem_used_mb: 7200 }));
    assert.equal(s.components.cpu, 100);
    assert.equal(s.components.memory, 100);
    assert.equal(s.score, 800);
    assert.deepEqual(s.notes, ['CPU averaged 85% over the last 10 min', 'Memory averaged 90% used']);
  });

  test('4. overloaded', () => {
    const s = score(samples({ load1: 4 }));
    assert.equal(s.components.stability, 75);
    assert.equal(s.score, 925);
    assert.deepEqual(s.notes, ['Load averaged 2 per core']);
  });

  test('5. going quiet', () => {
    const s = score(samples(), 2, NOW - 300_000);
    assert.equal(s.components.freshness, 83);
    assert.equal(s.score, 933);
    assert.deepEqual(s.notes, ['Last check-in 5 min ago']);
  });

  test('6. lossy link', () => {
    const s = score(samples({ net_errors_ps: 20 }));
    assert.equal(s.components.network, 92);
    assert.equal(s.score, 942);
    assert.deepEqual(s.notes, ['Network lost or errored 2% of packets']);
  });

  test('7. never seen', () => {
    const s = serverScore(null, null, NOW);
    assert.equal(s.score, 0);
    assert.deepEqual(s.notes, ['The agent has never checked in']);
  });
});

describe('the model', () => {
  test('one spike among quiet samples costs little; samples older than ten minutes do not count', () => {
    const list = samples();
    list[0] = { ...list[0]!, cpu_pct: 100 };
    assert.equal(score(list).components.cpu, 200, 'mean of 20 samples with one at 100% is 24%');
    const old = [...samples(), ...samples({ cpu_pct: 100 }).map((s) => ({ ...s, ts: s.ts - 3600_000 }))];
    assert.equal(score(old).components.cpu, 200);
  });

  test('components never leave their range, whatever the input', () => {
    for (const extreme of [
      { cpu_pct: 250, mem_used_mb: 1e9, disk_used_pct: 500, load1: 1e6, net_errors_ps: 1e9 },
      { cpu_pct: -5, mem_used_mb: -1, mem_total_mb: 0, disk_used_pct: -3, load1: -1, net_errors_ps: -1 },
      { cpu_pct: Number.NaN, load1: Number.NaN },
    ]) {
      const s = score(samples(extreme));
      for (const [name, value] of Object.entries(s.components)) {
        assert.ok(Number.isInteger(value), `${name} is an integer`);
        assert.ok(value >= 0 && value <= WEIGHTS[name as keyof typeof WEIGHTS], `${name}=${value}`);
      }
      assert.ok(s.score >= 0 && s.score <= 1000);
    }
  });

  test('after an hour without a check-in the old samples stop counting', () => {
    const s = score(samples(), 2, NOW - 2 * 3600_000);
    assert.equal(s.score, 0);
    assert.deepEqual(s.notes, ['No samples in the last hour', 'Last check-in 2 h ago']);
  });
});
