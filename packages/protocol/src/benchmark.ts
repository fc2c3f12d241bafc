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

type Section = keyof typeof BENCHMARK_WEIGHTS;

/**
 * Every scored figure with its unit and scale (docs/benchmarks.md, "Report and scales"): `log` scores 0
 * at `zero` and 100 at `full`, each doubling worth the same; `lower` is a straight line from 100 at
 * `full` to 0 at `zero` (a smaller figure is better). `share` is its part of the section's score.
 */
export const BENCHMARK_FIGURES = [
  {
    section: 'cpu',
    key: 'single_mb_s',
    what: 'SHA-256 on one core',
    unit: 'MB/s',
    scale: 'log',
    zero: 20,
    full: 2000,
    share: 0.5,
  },
  {
    section: 'cpu',
    key: 'multi_mb_s',
    what: 'SHA-256 on all cores at once',
    unit: 'MB/s',
    scale: 'log',
    zero: 20,
    full: 32_000,
    share: 0.5,
  },
  {
    section: 'disk',
    key: 'seq_write_mb_s',
    what: 'Sequential write with fsync',
    unit: 'MB/s',
    scale: 'log',
    zero: 5,
    full: 2000,
    share: 0.4,
  },
  {
    section: 'disk',
    key: 'seq_read_mb_s',
    what: 'Reading it back',
    unit: 'MB/s',
    scale: 'log',
    zero: 5,
    full: 4000,
    share: 0.2,
  },
  {
    section: 'disk',
    key: 'rand_write_iops',
    what: '4 KiB synchronous random writes',
    unit: 'IOPS',
    scale: 'log',
    zero: 10,
    full: 20_000,
    share: 0.4,
  },
  {
    section: 'network',
    key: 'down_mbit_s',
    what: 'Console → agent',
    unit: 'Mbit/s',
    scale: 'log',
    zero: 1,
    full: 1000,
    share: 0.35,
  },
  {
    section: 'network',
    key: 'up_mbit_s',
    what: 'Agent → console',
    unit: 'Mbit/s',
    scale: 'log',
    zero: 1,
    full: 1000,
    share: 0.35,
  },
  {
    section: 'network',
    key: 'latency_ms',
    what: 'Median round trip',
    unit: 'ms',
    scale: 'lower',
    zero: 300,
    full: 1,
    share: 0.3,
  },
  {
    section: 'stability',
    key: 'cpu_cv_pct',
    what: 'Spread of repeated CPU rounds',
    unit: '%',
    scale: 'lower',
    zero: 30,
    full: 1,
    share: 0.6,
  },
  {
    section: 'stability',
    key: 'steal_pct',
    what: 'CPU steal during the run',
    unit: '%',
    scale: 'lower',
    zero: 20,
    full: 0,
    share: 0.4,
  },
] as const satisfies readonly {
  section: Section;
  key: string;
  what: string;
  unit: string;
  scale: 'log' | 'lower';
  zero: number;
  full: number;
  share: number;
}[];
export type BenchmarkFigure = (typeof BENCHMARK_FIGURES)[number];

/** A figure's points, 0–100, on its scale. */
export function figurePoints(figure: BenchmarkFigure, value: number): number {
  return figure.scale === 'log'
    ? logScale(value, figure.zero, figure.full)
    : lowerIsBetter(value, figure.full, figure.zero);
}

/** A figure's value in a report, or null when its section was not measured. */
export function figureValue(m: BenchmarkMeasurements, figure: BenchmarkFigure): number | null {
  const section = m[figure.section] as Record<string, number> | null;
  return section ? (section[figure.key] ?? null) : null;
}

/** The documented scales (docs/benchmarks.md): each section is the share-weighted sum of its figures' points. */
export function scoreBenchmark(m: BenchmarkMeasurements): BenchmarkScores {
  const section = (name: Section) => {
    if (!m[name]) return null;
    let points = 0;
    for (const figure of BENCHMARK_FIGURES) {
      if (figure.section === name) points += figure.share * figurePoints(figure, figureValue(m, figure)!);
    }
    return round1(points);
  };
  const cpu = section('cpu');
  const disk = section('disk');
  const network = section('network');
  const stability = section('stability');
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
