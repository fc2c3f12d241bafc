import type { FleetTrend, FleetTrends } from '@palisade/protocol';
import { latestSampleOf } from './views.js';

/** The fleet table's sparkline: the last hour in 5-minute buckets (docs/fleet.md, "Fleet trends"). */
export const TREND_WINDOW_MS = 3600_000;
export const TREND_BUCKET_MS = 300_000;

const figure = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const round1 = (v: number | null) => (v === null ? null : Math.round(v * 10) / 10);

/** A server's figures now from its newest check-in's sample (packages/protocol/src/checkin.ts). */
function nowOf(latestSample: string | null): FleetTrend['now'] {
  const s = latestSampleOf(latestSample);
  const at = figure(s?.ts);
  if (!s || at === null) return null;
  const used = figure(s.mem_used_mb);
  const total = figure(s.mem_total_mb);
  const rx = figure(s.rx_bps);
  const tx = figure(s.tx_bps);
  return {
    at,
    cpu_pct: round1(figure(s.cpu_pct)),
    mem_pct: used !== null && total ? round1((100 * used) / total) : null,
    disk_pct: round1(figure(s.disk_used_pct)),
    net_bits_per_s: rx === null && tx === null ? null : Math.round(((rx ?? 0) + (tx ?? 0)) * 8),
  };
}

/**
 * Each server's trend from its newest sample and the fleet's CPU buckets (bucket = ts / TREND_BUCKET_MS).
 * The window ends at the bucket holding `now`; a bucket without samples is null, so the line shows a gap.
 */
export function fleetTrends(
  servers: readonly { id: number; latest_sample: string | null }[],
  buckets: readonly { server_id: number; bucket: number; cpu: number }[],
  now: number,
): FleetTrends {
  const count = TREND_WINDOW_MS / TREND_BUCKET_MS;
  const last = Math.floor(now / TREND_BUCKET_MS);
  const first = last - count + 1;
  const cpu = new Map<number, (number | null)[]>();
  for (const b of buckets) {
    if (b.bucket < first || b.bucket > last) continue;
    const series = cpu.get(b.server_id) ?? new Array<number | null>(count).fill(null);
    series[b.bucket - first] = round1(b.cpu);
    cpu.set(b.server_id, series);
  }
  return {
    window_ms: TREND_WINDOW_MS,
    bucket_ms: TREND_BUCKET_MS,
    as_of: (last + 1) * TREND_BUCKET_MS,
    servers: servers.map((s) => ({
      id: s.id,
      now: nowOf(s.latest_sample),
      cpu: cpu.get(s.id) ?? new Array<number | null>(count).fill(null),
    })),
  };
}
