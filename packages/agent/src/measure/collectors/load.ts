import type { AgentDeps } from '../../deps.js';
import type { Collector, LoadFigures } from '../types.js';

export function parseLoadavg(text: string): LoadFigures {
  const [a, b, c] = text.trim().split(/\s+/).map(Number);
  if (![a, b, c].every((n) => n !== undefined && Number.isFinite(n))) throw new Error('unreadable /proc/loadavg');
  return { load1: a!, load5: b!, load15: c! };
}

export function loadCollector(deps: AgentDeps): Collector<'load'> {
  const linux = deps.host.platform === 'linux';
  return {
    name: 'load',
    async collect() {
      if (linux) return { value: parseLoadavg(await deps.host.read('/proc/loadavg')) };
      const [load1, load5, load15] = deps.host.loadavg();
      return { value: { load1, load5, load15 } };
    },
  };
}
