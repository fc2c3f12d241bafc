import type { Database } from '../../db/schema.js';
import { samplesBetween } from '../../repositories/samples.repository.js';

export const HISTORY_RANGES = {
  '1h': 3600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
} as const;
export type HistoryRange = keyof typeof HISTORY_RANGES;
/** At most this many points per chart: samples are averaged into buckets of span ÷ points. */
const HISTORY_POINTS = 360;

/** A server's samples over `range` up to `now`, averaged per bucket for the dashboard's charts. */
export async function serverHistory(db: Database, serverId: number, range: HistoryRange, now: number) {
  const span = HISTORY_RANGES[range];
  const rows = await samplesBetween(db, serverId, now - span, now);
  const bucketMs = Math.max(1000, Math.ceil(span / HISTORY_POINTS));
  const buckets = new Map<number, typeof rows>();
  for (const row of rows) {
    const key = Math.floor(row.ts / bucketMs) * bucketMs;
    const list = buckets.get(key);
    if (list) list.push(row);
    else buckets.set(key, [row]);
  }
  const avg = (list: typeof rows, pick: (r: (typeof rows)[number]) => number) =>
    Math.round((list.reduce((a, r) => a + pick(r), 0) / list.length) * 100) / 100;
  const samples = [...buckets.entries()].map(([ts, list]) => ({
    ts,
    cpu_pct: avg(list, (r) => r.cpu_pct),
    mem_used_mb: avg(list, (r) => r.mem_used_mb),
    mem_total_mb: avg(list, (r) => r.mem_total_mb),
    disk_used_pct: avg(list, (r) => r.disk_used_pct),
    load1: avg(list, (r) => r.load1),
    rx_bps: avg(list, (r) => r.rx_bps),
    tx_bps: avg(list, (r) => r.tx_bps),
  }));
  return { range, from: now - span, to: now, bucket_ms: bucketMs, samples };
}
