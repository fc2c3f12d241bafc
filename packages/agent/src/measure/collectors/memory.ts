import type { AgentDeps } from '../../deps.js';
import type { Collector, MemoryFigures } from '../types.js';
import { mb, round1 } from '../types.js';

/** /proc/meminfo in bytes, by field name. */
export function parseMeminfo(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\w+(?:\(\w+\))?):\s+(\d+)(?:\s+kB)?/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]) * (line.includes('kB') ? 1024 : 1));
  }
  return out;
}

/** Used memory is total minus MemAvailable (what the kernel could hand out without swapping). */
export function memoryFigures(info: Map<string, number>): MemoryFigures {
  const total = info.get('MemTotal');
  if (total === undefined) throw new Error('no MemTotal in /proc/meminfo');
  const available =
    info.get('MemAvailable') ?? (info.get('MemFree') ?? 0) + (info.get('Buffers') ?? 0) + (info.get('Cached') ?? 0);
  const used = Math.max(0, total - available);
  const swapTotal = info.get('SwapTotal');
  const swapFree = info.get('SwapFree');
  return {
    total_mb: mb(total),
    used_mb: mb(used),
    pct: total > 0 ? round1((100 * used) / total) : 0,
    swap_total_mb: swapTotal === undefined ? null : mb(swapTotal),
    swap_used_mb: swapTotal === undefined || swapFree === undefined ? null : mb(swapTotal - swapFree),
  };
}

export function memoryCollector(deps: AgentDeps): Collector<'memory'> {
  const linux = deps.host.platform === 'linux';
  return {
    name: 'memory',
    async collect() {
      if (linux) return { value: memoryFigures(parseMeminfo(await deps.host.read('/proc/meminfo'))) };
      const { totalBytes, freeBytes } = deps.host.memory();
      const value = memoryFigures(
        new Map([
          ['MemTotal', totalBytes],
          ['MemAvailable', freeBytes],
        ]),
      );
      return { value, error: `swap: unavailable on ${deps.host.platform}` };
    },
  };
}
