import type { AgentMetrics, HistorySample, HistorySection } from '@palisade/protocol';
import { ONLINE_WINDOW_MS } from '@palisade/protocol/server-state';

/*
 * Chart data from the console's answers (docs/dashboard.md, "Charts"). A history answer is drawn over
 * the window the console names (`from`–`to`), never a window guessed from the data. Agents check in
 * about once a minute, so most buckets of a short range hold no sample; a line joins samples up to
 * `maxGap` apart, and a longer silence (the server counted offline, docs/fleet.md) is a gap: a null
 * slot, so no line is drawn across an outage.
 */

/** The longest silence drawn as a line: the time a server counts as online, or two buckets if longer. */
export const maxGap = (bucketMs: number) => Math.max(ONLINE_WINDOW_MS, 2 * bucketMs);

/** The history's samples in time order, with a null slot wherever the next one is more than `maxGap` later. */
export function historySlots<T extends { ts: number }>(history: { bucket_ms: number; samples: T[] }) {
  const sorted = [...history.samples].sort((a, b) => a.ts - b.ts);
  return withBreaks(sorted, maxGap(history.bucket_ms));
}

/**
 * Points in time order with a null slot between two that are more than `maxGapMs` apart (the live
 * chart's readings: a silence in them is drawn as a gap, not a straight line).
 */
export function withBreaks<T extends { ts: number }>(points: T[], maxGapMs: number) {
  const times: number[] = [];
  const rows: (T | null)[] = [];
  points.forEach((p, i) => {
    const before = points[i - 1];
    if (before && p.ts - before.ts > maxGapMs) {
      times.push(Math.round((before.ts + p.ts) / 2));
      rows.push(null);
    }
    times.push(p.ts);
    rows.push(p);
  });
  return { times, rows };
}

/** Indexes of values with no value on either side: a line cannot show them, so they are drawn as dots. */
export function isolated(values: (number | null)[]): number[] {
  const out: number[] = [];
  values.forEach((v, i) => {
    if (v === null) return;
    if ((values[i - 1] ?? null) === null && (values[i + 1] ?? null) === null) out.push(i);
  });
  return out;
}

const memoryPct = (s: HistorySample) => (s.mem_total_mb > 0 ? (100 * s.mem_used_mb) / s.mem_total_mb : null);

/** The history's series: one slot per bucket with samples, null where a silence is a gap. */
export function historySeries(history: HistorySection) {
  const { times, rows } = historySlots(history);
  const pick = (f: (s: HistorySample) => number | null) => rows.map((r) => (r ? f(r) : null));
  return {
    times,
    usage: [
      { label: 'CPU', values: pick((s) => s.cpu_pct), color: 'var(--chart-cpu)' },
      { label: 'Memory', values: pick(memoryPct), color: 'var(--chart-memory)' },
      { label: 'Disk', values: pick((s) => s.disk_used_pct), color: 'var(--chart-disk)' },
    ],
    load: [{ label: 'Load (1 min)', values: pick((s) => s.load1), color: 'var(--chart-load)' }],
    // The agent reports bytes per second; the chart shows bit/s.
    net: [
      { label: 'In', values: pick((s) => s.rx_bps * 8), color: 'var(--chart-in)' },
      { label: 'Out', values: pick((s) => s.tx_bps * 8), color: 'var(--chart-out)' },
    ],
  };
}

/** The live chart's window. */
export const LIVE_WINDOW_MS = 5 * 60_000;

interface Point {
  ts: number;
  cpu: number | null;
  mem: number | null;
}

/** The live chart's points: the history's recent buckets up to the first live reading, then the readings. */
export function liveChart(recent: HistorySection | undefined, trail: AgentMetrics[]) {
  const live: Point[] = trail.map((m) => ({ ts: m.ts, cpu: m.cpu.pct, mem: m.memory.pct }));
  const to = Math.max(live.at(-1)?.ts ?? 0, recent?.to ?? 0);
  const from = to - LIVE_WINDOW_MS;
  const firstLive = live[0]?.ts ?? Number.POSITIVE_INFINITY;
  const past: Point[] = (recent?.samples ?? [])
    .filter((s) => s.ts >= from && s.ts < firstLive)
    .map((s) => ({ ts: s.ts, cpu: s.cpu_pct, mem: memoryPct(s) }));
  const { times, rows } = withBreaks([...past, ...live], maxGap(recent?.bucket_ms ?? 0));
  return {
    from,
    to,
    times,
    series: [
      { label: 'CPU', values: rows.map((r) => r?.cpu ?? null), color: 'var(--chart-cpu)' },
      { label: 'Memory', values: rows.map((r) => r?.mem ?? null), color: 'var(--chart-memory)' },
    ],
  };
}
