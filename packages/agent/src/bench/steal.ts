/** Jiffies of the aggregate `cpu` line of /proc/stat: all of them, and those stolen by the hypervisor. */
export interface StealTimes {
  steal: number;
  total: number;
}

/** The `cpu` line's total and steal (8th field) jiffies; guest time is already inside user. */
export function parseStealTimes(procStat: string): StealTimes {
  const line = procStat.split('\n').find((l) => l.startsWith('cpu '));
  if (!line) throw new Error('no "cpu" line in /proc/stat');
  const fields = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (fields.length < 4 || fields.some((n) => !Number.isFinite(n)))
    throw new Error('unreadable "cpu" line in /proc/stat');
  return { steal: fields[7] ?? 0, total: fields.reduce((a, b) => a + b, 0) };
}

/** Share of CPU time stolen between two readings, in percent (0 when no time passed). */
export function stealPercent(before: StealTimes, after: StealTimes): number {
  const total = after.total - before.total;
  const steal = after.steal - before.steal;
  if (total <= 0 || steal <= 0) return 0;
  return Math.min(100, (100 * steal) / total);
}

/** Coefficient of variation (population standard deviation ÷ mean) of the rounds, in percent. */
export function spreadPercent(rates: number[]): number {
  if (rates.length < 2) throw new Error('at least two rounds are needed for a spread');
  const mean = rates.reduce((a, b) => a + b, 0) / rates.length;
  if (!(mean > 0)) throw new Error('the rounds measured no work');
  const variance = rates.reduce((a, r) => a + (r - mean) ** 2, 0) / rates.length;
  return (100 * Math.sqrt(variance)) / mean;
}
