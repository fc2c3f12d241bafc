import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HistorySample, HistorySection } from '@palisade/protocol';
import { historySeries, historySlots, isolated, liveChart, maxGap, withBreaks } from '../src/lib/series';

const sample = (ts: number, cpu = 10): HistorySample => ({
  ts,
  cpu_pct: cpu,
  mem_used_mb: 1000,
  mem_total_mb: 4000,
  disk_used_pct: 40,
  load1: 0.5,
  rx_bps: 1000,
  tx_bps: 500,
});

const NOW = 1_795_000_000_000;
const DAY = 86_400_000;

describe('chart windows and gaps (docs/dashboard.md, "Charts")', () => {
  test('30 days with one point today: one slot, drawn as a dot; the window is the console’s', () => {
    const bucket = Math.ceil((30 * DAY) / 360);
    const today = Math.floor((NOW - 60_000) / bucket) * bucket;
    const h: HistorySection = {
      range: '30d',
      from: NOW - 30 * DAY,
      to: NOW,
      bucket_ms: bucket,
      samples: [sample(today, 42)],
    };
    const { times, usage } = historySeries(h);
    assert.deepEqual(times, [today], 'nothing invented before or after it');
    assert.deepEqual(usage[0]!.values, [42]);
    assert.deepEqual(isolated(usage[0]!.values), [0], 'a lone point is drawn as a dot');
  });

  test('check-ins a minute apart in 10 s buckets are one line; a silence longer than two minutes is a gap', () => {
    const bucket = 10_000;
    const minute = (m: number) => Math.floor((NOW - m * 60_000) / bucket) * bucket;
    const samples = [50, 49, 48, 47, 30, 29, 28].map((m) => sample(minute(m), m));
    assert.equal(maxGap(bucket), 120_000);
    const { net, usage, times } = historySeries({
      range: '1h',
      from: NOW - 3600_000,
      to: NOW,
      bucket_ms: bucket,
      samples,
    });
    assert.deepEqual(
      usage[0]!.values,
      [50, 49, 48, 47, null, 30, 29, 28],
      'a line through the minutes, one null for the 17 silent minutes',
    );
    assert.ok(times[4]! > minute(47) && times[4]! < minute(30), 'the null sits inside the silence');
    assert.deepEqual(net[0]!.values.slice(0, 2), [8000, 8000], 'bytes per second shown in bit/s');
    assert.deepEqual(isolated(usage[0]!.values), [], 'runs are lines');
  });

  test('long ranges: a gap needs two empty buckets, so a one-bucket hole in 30 days is still a line', () => {
    const bucket = Math.ceil((30 * DAY) / 360);
    assert.equal(maxGap(bucket), 2 * bucket);
    const { rows } = historySlots({ bucket_ms: bucket, samples: [0, 2, 3, 7].map((i) => sample(i * bucket)) });
    assert.deepEqual(
      rows.map((r) => (r ? r.ts / bucket : null)),
      [0, 2, 3, null, 7],
    );
  });

  test('live readings: a silence longer than the limit gets a null between', () => {
    const pts = [0, 2000, 4000, 64_000, 66_000].map((ts) => ({ ts }));
    const { times, rows } = withBreaks(pts, 30_000);
    assert.deepEqual(times, [0, 2000, 4000, 34_000, 64_000, 66_000]);
    assert.deepEqual(
      rows.map((r) => (r ? r.ts : null)),
      [0, 2000, 4000, null, 64_000, 66_000],
    );
  });

  test('the live chart starts from the recent history, then the readings; five minutes ending at the last', () => {
    const history: HistorySection = {
      range: '1h',
      from: NOW - 3600_000,
      to: NOW,
      bucket_ms: 10_000,
      samples: [sample(NOW - 20 * 60_000, 99), sample(NOW - 100_000, 20), sample(NOW - 90_000, 25)],
    };
    const reading = (ts: number, pct: number) =>
      ({ ts, cpu: { pct, load1: 0.1 }, memory: { pct: 50 } }) as unknown as Parameters<typeof liveChart>[1][number];
    const chart = liveChart(history, [reading(NOW - 80_000, 30), reading(NOW - 78_000, 35)]);
    assert.equal(chart.to, NOW);
    assert.equal(chart.from, NOW - 5 * 60_000);
    assert.deepEqual(chart.times, [NOW - 100_000, NOW - 90_000, NOW - 80_000, NOW - 78_000], 'not 20 minutes ago');
    assert.deepEqual(chart.series[0]!.values, [20, 25, 30, 35]);
    assert.deepEqual(chart.series[1]!.values, [25, 25, 50, 50], 'memory in % of the total');
    const reloaded = liveChart(history, []);
    assert.deepEqual(reloaded.series[0]!.values, [20, 25], 'after a reload the minutes before are still there');
  });
});
