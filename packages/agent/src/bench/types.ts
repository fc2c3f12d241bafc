// The report's shapes come from the protocol package as types only: nothing of it (nor zod) is
// loaded by the agent at run time for a benchmark.
import type { BenchmarkMeasurements, BenchmarkReport } from '@palisade/protocol';

export type { BenchmarkMeasurements, BenchmarkReport };
export type SectionName = keyof BenchmarkMeasurements;
export type CpuMeasurement = NonNullable<BenchmarkMeasurements['cpu']>;
export type DiskMeasurement = NonNullable<BenchmarkMeasurements['disk']>;
export type NetworkMeasurement = NonNullable<BenchmarkMeasurements['network']>;
export type StabilityMeasurement = NonNullable<BenchmarkMeasurements['stability']>;

/** Where a run's log lines go (the console's run log, or the terminal for `palisade-agent bench`). */
export type BenchLog = (line: string) => void;

/** The `bench.*` settings a run uses. */
export interface BenchSettings {
  /** Directory of the disk section's temp file. */
  dir: string;
  maxDiskMb: number;
  maxSeconds: number;
}

export const fmt = (n: number) => (n >= 100 ? n.toFixed(0) : n.toFixed(1));
