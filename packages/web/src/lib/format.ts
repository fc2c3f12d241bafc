import { ageText } from '@palisade/protocol/server-state';

/** Display helpers; every timestamp from the console is epoch milliseconds. */

/**
 * "3 min ago" counted on the console's clock (`asOf` of the answer), in the words the console's score
 * notes use, so a header and the notes it sits beside never disagree (docs/fleet.md, "Server states").
 */
export function since(ts: number | null | undefined, asOf: number): string {
  if (!ts) return 'never';
  return `${ageText(asOf - ts)} ago`;
}

export function timeAgo(ts: number | null | undefined, now = Date.now()): string {
  if (!ts) return 'never';
  const s = Math.round((now - ts) / 1000);
  if (s < 5) return 'just now';
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

export function dateTime(ts: number | null | undefined): string {
  if (!ts) return '—';
  // 24-hour, as the charts' axes: one clock on every page.
  return new Date(ts).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short', hourCycle: 'h23' });
}

export function money(cents: number, currency: string): string {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency }).format(cents / 100);
}

export type ScoreBand = 'good' | 'fair' | 'poor';

/** Score bands (0–1000): the colour and the word always go together. */
export function scoreBand(score: number): ScoreBand {
  if (score >= 800) return 'good';
  if (score >= 500) return 'fair';
  return 'poor';
}

/*
 * Numbers with their units (docs/dashboard.md, "Units"). Every chart legend, hover value, axis and
 * table formats through these, so a figure reads the same everywhere: at most three significant
 * digits below 1,000, whole numbers above, a space before the unit.
 */

const grouped = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** A plain figure: three significant digits below 1,000 (`0.848`, `12.3`, `123`), whole and grouped above (`20,000`). */
export function figure(value: number): string {
  if (!Number.isFinite(value)) return '—';
  if (value === 0) return '0';
  if (Math.abs(value) >= 999.5) return grouped.format(value);
  return String(Number(value.toPrecision(3)));
}

/** A figure with its unit, or `—` when there is none. */
export function withUnit(value: number | null | undefined, unit: string): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return unit ? `${figure(value)} ${unit}` : figure(value);
}

/** Percent with at most one decimal: `3.7 %`, `100 %`. */
export function percent(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const rounded = Math.abs(value) >= 99.95 ? Math.round(value) : Math.round(value * 10) / 10;
  return `${rounded} %`;
}

/** A unit family: the base unit and its prefixed multiples, smallest first. */
export interface UnitScale {
  steps: readonly { factor: number; unit: string }[];
}

/** Network rates in bit/s with SI prefixes (1 kbit/s = 1,000 bit/s). */
export const BITS: UnitScale = {
  steps: [
    { factor: 1, unit: 'bit/s' },
    { factor: 1e3, unit: 'kbit/s' },
    { factor: 1e6, unit: 'Mbit/s' },
    { factor: 1e9, unit: 'Gbit/s' },
    { factor: 1e12, unit: 'Tbit/s' },
  ],
};

/** Memory and disk sizes in binary bytes (1 MiB = 1,024 KiB), as the agent and the kernel count them. */
export const BYTES: UnitScale = {
  steps: [
    { factor: 1, unit: 'B' },
    { factor: 2 ** 10, unit: 'KiB' },
    { factor: 2 ** 20, unit: 'MiB' },
    { factor: 2 ** 30, unit: 'GiB' },
    { factor: 2 ** 40, unit: 'TiB' },
  ],
};

/** The largest step of `scale` that keeps `magnitude` at 1 or more (the base step for smaller ones). */
export function stepFor(scale: UnitScale, magnitude: number) {
  let chosen = scale.steps[0]!;
  for (const step of scale.steps) if (Math.abs(magnitude) >= step.factor * 0.9995) chosen = step;
  return chosen;
}

/** `value` (in the base unit) in the step that suits it: `1.23 Mbit/s`, `7.81 GiB`. */
export function scaled(value: number | null | undefined, scale: UnitScale): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  const step = stepFor(scale, value);
  return `${figure(value / step.factor)} ${step.unit}`;
}

/** A network rate the agent reports in bytes per second, shown in bit/s. */
export function bitsPerSecond(bytesPerS: number | null | undefined): string {
  return bytesPerS === null || bytesPerS === undefined ? '—' : scaled(bytesPerS * 8, BITS);
}

/** A size the agent reports in MiB (its `_mb` fields count 1,048,576 bytes). */
export function megabytes(mib: number | null | undefined): string {
  return mib === null || mib === undefined ? '—' : scaled(mib * 2 ** 20, BYTES);
}

/** How one chart's values are shown: hover and legend (`value`) and axis ticks (`ticks`). */
export interface ValueFormat {
  value: (v: number) => string;
  ticks: (splits: number[], increment: number) => string[];
}

/** Decimals that tell ticks `increment` apart (at most three). */
function tickDecimals(increment: number): number {
  if (!(increment > 0)) return 0;
  for (let d = 0; d < 3; d++) {
    const shifted = increment * 10 ** d;
    if (Math.abs(shifted - Math.round(shifted)) < 1e-6 * Math.max(1, shifted)) return d;
  }
  return 3;
}

/**
 * Axis ticks in one unit for the whole axis (chosen from the largest tick) with as many decimals as the
 * tick increment needs, so no two ticks read the same (`0.2 kbit/s`, `0.4 kbit/s`, not `1.2 kbit/s` thrice).
 */
export function tickLabels(splits: number[], increment: number, scale: UnitScale | string): string[] {
  const top = Math.max(0, ...splits.map((s) => Math.abs(s)));
  const step = typeof scale === 'string' ? { factor: 1, unit: scale } : stepFor(scale, top);
  const decimals = tickDecimals(increment / step.factor);
  return splits.map((s) => {
    const text = (s / step.factor).toFixed(decimals);
    return step.unit ? `${text} ${step.unit}` : text;
  });
}

export const PERCENT_FORMAT: ValueFormat = {
  value: (v) => percent(v),
  ticks: (splits, increment) => tickLabels(splits, increment, '%'),
};
/** For series in bit/s (convert the agent's bytes per second first). */
export const BITS_FORMAT: ValueFormat = {
  value: (v) => scaled(v, BITS),
  ticks: (splits, increment) => tickLabels(splits, increment, BITS),
};
export const PLAIN_FORMAT: ValueFormat = {
  value: (v) => figure(v),
  ticks: (splits, increment) => tickLabels(splits, increment, ''),
};

/*
 * Times on chart axes: times of day for windows up to two days, dates beyond, never fractions of a
 * second. Local time, 24-hour clock.
 */

const pad = (n: number) => String(n).padStart(2, '0');
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAY_MS = 86_400_000;

/** The tick steps (seconds) an axis over `spanMs` may use: whole minutes and hours, or whole days. */
export function timeIncrements(spanMs: number): number[] {
  if (spanMs > 2 * DAY_MS) return [1, 2, 3, 7, 14, 30].map((d) => d * 86_400);
  return [10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10_800, 21_600, 43_200, 86_400];
}

/** An axis tick at `ts` (epoch ms) for a window of `spanMs` whose ticks are `incrementS` seconds apart. */
export function timeTick(ts: number, spanMs: number, incrementS: number): string {
  const d = new Date(ts);
  if (spanMs > 2 * DAY_MS) return `${MONTHS[d.getMonth()]} ${d.getDate()}`;
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  return incrementS < 60 ? `${clock}:${pad(d.getSeconds())}` : clock;
}

/** The time under the cursor: `Nov 23, 14:05` (seconds too for the live chart's readings). */
export function pointTime(ts: number, seconds = false): string {
  const d = new Date(ts);
  const clock = `${pad(d.getHours())}:${pad(d.getMinutes())}${seconds ? `:${pad(d.getSeconds())}` : ''}`;
  return `${MONTHS[d.getMonth()]} ${d.getDate()}, ${clock}`;
}

/** The change from `before` to `after` in percent of `before`: `+12.3 %`, `−4.1 %`, `0 %`; `—` without a base. */
export function change(before: number | null | undefined, after: number | null | undefined): string {
  if (before === null || before === undefined || after === null || after === undefined) return '—';
  if (before === 0) return after === 0 ? '0 %' : '—';
  const pct = (100 * (after - before)) / Math.abs(before);
  const text = figure(Math.abs(pct));
  if (text === '0') return '0 %';
  return `${pct > 0 ? '+' : '−'}${text} %`;
}
