import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  BITS,
  BITS_FORMAT,
  BYTES,
  bitsPerSecond,
  change,
  figure,
  megabytes,
  PERCENT_FORMAT,
  PLAIN_FORMAT,
  percent,
  pointTime,
  scaled,
  tickLabels,
  timeIncrements,
  timeTick,
  withUnit,
} from '../src/lib/format';

const distinct = (labels: string[]) => new Set(labels).size === labels.length;

describe('units (docs/dashboard.md, "Units")', () => {
  test('figures keep at most three significant digits below 1,000 and are whole above', () => {
    assert.equal(figure(0.8477170000041951), '0.848');
    assert.equal(figure(3.725), '3.73');
    assert.equal(figure(12.345), '12.3');
    assert.equal(figure(123.4), '123');
    assert.equal(figure(999.6), '1,000');
    assert.equal(figure(20_000.4), '20,000');
    assert.equal(figure(0), '0');
    assert.equal(figure(2), '2');
    assert.equal(withUnit(0.8477170000041951, 'ms'), '0.848 ms');
    assert.equal(withUnit(2500, 'IOPS'), '2,500 IOPS');
    assert.equal(withUnit(null, 'MB/s'), '—');
  });

  test('percentages: one decimal at most, a space before the sign', () => {
    assert.equal(percent(3.725), '3.7 %');
    assert.equal(percent(40), '40 %');
    assert.equal(percent(99.97), '100 %');
    assert.equal(percent(0.04), '0 %');
    assert.equal(percent(null), '—');
  });

  test('network in bit/s with SI prefixes, from the agent’s bytes per second', () => {
    assert.equal(bitsPerSecond(0), '0 bit/s');
    assert.equal(bitsPerSecond(100), '800 bit/s');
    assert.equal(bitsPerSecond(150), '1.2 kbit/s');
    assert.equal(bitsPerSecond(1_234_567), '9.88 Mbit/s');
    assert.equal(bitsPerSecond(125_000_000), '1 Gbit/s');
    assert.equal(scaled(999_999, BITS), '1 Mbit/s', 'rounds up into the next prefix, not `1,000 kbit/s`');
    assert.equal(bitsPerSecond(undefined), '—');
  });

  test('memory and disk in binary bytes from the agent’s MiB', () => {
    assert.equal(megabytes(512), '512 MiB');
    assert.equal(megabytes(8000), '7.81 GiB');
    assert.equal(megabytes(1024), '1 GiB');
    assert.equal(megabytes(0.5), '512 KiB');
    assert.equal(scaled(3 * 2 ** 40, BYTES), '3 TiB');
  });

  test('axis ticks: one unit per axis, never two alike', () => {
    // The case: three ticks all read `1.2 kbit/s`.
    const close = [1180, 1190, 1200, 1210];
    assert.deepEqual(BITS_FORMAT.ticks(close, 10), ['1.18 kbit/s', '1.19 kbit/s', '1.20 kbit/s', '1.21 kbit/s']);
    assert.deepEqual(BITS_FORMAT.ticks([0, 500, 1000, 1500], 500), [
      '0.0 kbit/s',
      '0.5 kbit/s',
      '1.0 kbit/s',
      '1.5 kbit/s',
    ]);
    assert.deepEqual(BITS_FORMAT.ticks([0, 2e6, 4e6], 2e6), ['0 Mbit/s', '2 Mbit/s', '4 Mbit/s']);
    assert.deepEqual(PERCENT_FORMAT.ticks([0, 25, 50, 75, 100], 25), ['0 %', '25 %', '50 %', '75 %', '100 %']);
    assert.deepEqual(PLAIN_FORMAT.ticks([0, 0.25, 0.5], 0.25), ['0.00', '0.25', '0.50']);
    // The axes start at 0 (docs/dashboard.md), so ticks are multiples of the increment.
    for (const incr of [0.001, 0.002, 0.005, 0.01, 0.2, 1, 2.5, 5, 50, 250, 2000, 25_000, 5e6, 2.5e9]) {
      const splits = [0, 1, 2, 3, 4, 5].map((i) => i * incr);
      assert.ok(distinct(tickLabels(splits, incr, BITS)), `bits, step ${incr}`);
      assert.ok(distinct(tickLabels(splits, incr, '%')), `percent, step ${incr}`);
    }
    assert.equal(PERCENT_FORMAT.value(3.725), '3.7 %');
    assert.equal(BITS_FORMAT.value(1_234_567), '1.23 Mbit/s');
  });

  test('the change between two runs, in % of the first', () => {
    assert.equal(change(100, 112.3), '+12.3 %');
    assert.equal(change(200, 191.8), '−4.1 %');
    assert.equal(change(3, 3), '0 %');
    assert.equal(change(0, 5), '—');
    assert.equal(change(null, 5), '—');
  });
});

describe('time axes: times of day up to two days, dates beyond', () => {
  const at = new Date(2026, 10, 23, 14, 5, 19, 250).getTime();
  test('ticks', () => {
    assert.equal(timeTick(at, 3600_000, 600), '14:05');
    assert.equal(timeTick(at, 86_400_000, 3600), '14:05');
    assert.equal(timeTick(at, 300_000, 30), '14:05:19', 'the live chart: seconds, never fractions');
    assert.equal(timeTick(at, 7 * 86_400_000, 86_400), 'Nov 23');
    assert.equal(timeTick(at, 30 * 86_400_000, 7 * 86_400), 'Nov 23');
    assert.equal(pointTime(at), 'Nov 23, 14:05');
    assert.equal(pointTime(at, true), 'Nov 23, 14:05:19');
  });
  test('increments: whole seconds for the hour and the day, whole days for the week and the month', () => {
    assert.ok(timeIncrements(3600_000).every((s) => Number.isInteger(s) && s >= 10));
    assert.ok(timeIncrements(7 * 86_400_000).every((s) => s % 86_400 === 0));
    assert.ok(timeIncrements(30 * 86_400_000).every((s) => s % 86_400 === 0));
  });
});
