import type { AgentDeps } from '../../deps.js';
import type { Collector, CpuFigures } from '../types.js';
import { round1 } from '../types.js';

interface CpuTimes {
  busy: number;
  total: number;
}

/** The aggregate `cpu` line of /proc/stat as busy and total jiffies (iowait counts as idle). */
export function parseProcStat(text: string): CpuTimes & { cores: number } {
  const lines = text.split('\n');
  const first = lines.find((l) => l.startsWith('cpu '));
  if (!first) throw new Error('no "cpu" line in /proc/stat');
  const fields = first.trim().split(/\s+/).slice(1).map(Number);
  if (fields.length < 4 || fields.some((n) => !Number.isFinite(n)))
    throw new Error('unreadable "cpu" line in /proc/stat');
  const [user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0] = fields;
  const busy = user + nice + system + irq + softirq + steal;
  const cores = lines.filter((l) => /^cpu\d+\s/.test(l)).length;
  return { busy, total: busy + idle + iowait, cores };
}

/** Busy share between two readings; the first reading is measured against boot. */
export function cpuPercent(prev: CpuTimes | null, now: CpuTimes): number {
  const busy = now.busy - (prev?.busy ?? 0);
  const total = now.total - (prev?.total ?? 0);
  if (total <= 0) return 0;
  return round1(Math.min(100, Math.max(0, (100 * busy) / total)));
}

export function cpuCollector(deps: AgentDeps): Collector<'cpu'> {
  let prev: CpuTimes | null = null;
  const linux = deps.host.platform === 'linux';
  return {
    name: 'cpu',
    async collect() {
      const now = linux ? parseProcStat(await deps.host.read('/proc/stat')) : deps.host.cpuTimes();
      const value: CpuFigures = { pct: cpuPercent(prev, now) };
      prev = now;
      return { value };
    },
  };
}
