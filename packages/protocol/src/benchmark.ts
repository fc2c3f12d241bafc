import { z } from 'zod';

/**
 * A benchmark report: raw measurements per section (null when a section could not be measured, with
 * the reason in `skipped`), and the hardware as the agent saw it. Scores are derived from the
 * measurements with the scales below, by the agent for local runs and by the console for stored ones.
 */
const positive = z.number().finite().nonnegative();

export const cpuMeasurement = z.object({
  single_mb_s: positive, // SHA-256 throughput of one core
  multi_mb_s: positive, // the same on every core at once
  threads: z.number().int().positive(),
  compress_mb_s: positive.optional(), // deflate throughput of one core
});
export const diskMeasurement = z.object({
  seq_write_mb_s: positive, // sequential write with fsync
  seq_read_mb_s: positive, // reading it back
  rand_write_iops: positive, // 4 KiB synchronous random writes
});
export const networkMeasurement = z.object({
  down_mbit_s: positive, // console → agent
  up_mbit_s: positive, // agent → console
  latency_ms: positive, // median round trip of small requests
});
export const stabilityMeasurement = z.object({
  cpu_cv_pct: positive, // coefficient of variation of repeated single-core rounds
  steal_pct: positive, // CPU time stolen by the hypervisor during the run
});

export const benchmarkReport = z.object({
  measurements: z.object({
    cpu: cpuMeasurement.nullable(),
    disk: diskMeasurement.nullable(),
    network: networkMeasurement.nullable(),
    stability: stabilityMeasurement.nullable(),
  }),
  skipped: z.record(z.string(), z.string().max(500)).default({}),
  hardware: z
    .object({
      cores: z.number().int().positive(),
      mem_total_mb: positive,
      cpu_model: z.string().max(200).optional(),
      arch: z.string().max(32).optional(),
    })
    .catchall(z.union([z.string().max(200), z.number(), z.boolean()])),
  duration_ms: positive,
});

export type BenchmarkReport = z.infer<typeof benchmarkReport>;
export type BenchmarkMeasurements = BenchmarkReport['measurements'];

/** Section weights of `total`, the weighted mean of the sections that were measured. */
export const BENCHMARK_WEIGHTS = { cpu: 35, disk: 25, network: 20, stability: 20 } as const;

/** 0 at `low`, 100 at `high`, on a log scale between (each doubling is worth the same). */
function logScale(value: number, low: number, high: number): number {
  if (!(value > low)) return 0;
  if (value >= high) return 100;
  return (100 * Math.log(value / low)) / Math.log(high / low);
}

/** 100 at `best`, 0 at `worst` (a smaller value is better), straight line between. */
function lowerIsBetter(value: number, best: number, worst: number): number {
  if (value <= best) return 100;
  if (value >= worst) return 0;
  return (100 * (worst - value)) / (worst - best);
}

const round1 = (n: number) => Math.round(n * 10) / 10;

export interface BenchmarkScores {
  cpu: number | null;
  disk: number | null;
  network: number | null;
  stability: number | null;
  total: number | null;
}

/** The documented scales (docs/benchmarks.md). */
export function scoreBenchmark(m: BenchmarkMeasurements): BenchmarkScores {
  const cpu = m.cpu
    ? round1(0.5 * logScale(m.cpu.single_mb_s, 20, 2000) + 0.5 * logScale(m.cpu.multi_mb_s, 20, 32_000))
    : null;
  const disk = m.disk
    ? round1(
        0.4 * logScale(m.disk.seq_write_mb_s, 5, 2000) +
          0.2 * logScale(m.disk.seq_read_mb_s, 5, 4000) +
          0.4 * logScale(m.disk.rand_write_iops, 10, 20_000),
      )
    : null;
  const network = m.network
    ? round1(
        0.35 * logScale(m.network.down_mbit_s, 1, 1000) +
          0.35 * logScale(m.network.up_mbit_s, 1, 1000) +
          0.3 * lowerIsBetter(m.network.latency_ms, 1, 300),
      )
    : null;
  const stability = m.stability
    ? round1(0.6 * lowerIsBetter(m.stability.cpu_cv_pct, 1, 30) + 0.4 * lowerIsBetter(m.stability.steal_pct, 0, 20))
    : null;
  const sections = { cpu, disk, network, stability };
  let sum = 0;
  let weight = 0;
  for (const [name, value] of Object.entries(sections) as [keyof typeof BENCHMARK_WEIGHTS, number | null][]) {
    if (value === null) continue;
    sum += value * BENCHMARK_WEIGHTS[name];
    weight += BENCHMARK_WEIGHTS[name];
  }
  return { ...sections, total: weight > 0 ? round1(sum / weight) : null };
}
