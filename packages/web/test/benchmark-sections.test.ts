import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { comparisonGaps, unmeasured } from '../src/features/servers/components/benchmark-sections';

const run = (label: string, cpu: number | null, network: number | null) => ({
  label,
  scores: { total: 60, cpu, disk: 50, network, stability: 70 },
});

describe('benchmark comparison: totals over different sections are not compared', () => {
  test('the sections each run lacks, named with the run', () => {
    assert.deepEqual(unmeasured(run('a', null, 10)), ['CPU']);
    assert.deepEqual(comparisonGaps(run('Before', 40, 10), run('After', null, 10)), ['CPU was not measured in After']);
    assert.deepEqual(comparisonGaps(run('Before', null, 10), run('After', 40, null)), [
      'CPU was not measured in Before',
      'Network was not measured in After',
    ]);
    assert.deepEqual(
      comparisonGaps(run('Before', null, 10), run('After', null, 10)),
      [],
      'the same sections: comparable',
    );
  });
});
