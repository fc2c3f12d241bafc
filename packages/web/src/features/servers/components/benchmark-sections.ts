import type { BenchmarkRunView } from '@palisade/protocol';

export type SectionKey = 'total' | 'cpu' | 'disk' | 'network' | 'stability';
export const SECTIONS: { key: SectionKey; name: string }[] = [
  { key: 'total', name: 'Total' },
  { key: 'cpu', name: 'CPU' },
  { key: 'disk', name: 'Disk' },
  { key: 'network', name: 'Network' },
  { key: 'stability', name: 'Stability' },
];

type Scored = Pick<BenchmarkRunView, 'label' | 'scores'>;

/** The sections a finished run did not measure, by name (`CPU`). */
export const unmeasured = (run: Scored) =>
  SECTIONS.filter((s) => s.key !== 'total' && run.scores[s.key] === null).map((s) => s.name);

/**
 * Why two runs' totals cannot be compared: each section one measured and the other did not, named
 * with the run that lacks it (a total is the mean of the measured sections, docs/benchmarks.md).
 * Empty when both measured the same sections.
 */
export function comparisonGaps(a: Scored, b: Scored): string[] {
  const inA = unmeasured(a);
  const inB = unmeasured(b);
  return [
    ...inA.filter((s) => !inB.includes(s)).map((s) => `${s} was not measured in ${a.label}`),
    ...inB.filter((s) => !inA.includes(s)).map((s) => `${s} was not measured in ${b.label}`),
  ];
}
