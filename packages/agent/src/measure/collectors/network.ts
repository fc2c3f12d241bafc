import type { AgentDeps } from '../../deps.js';
import type { Collector, InterfaceFigures, NetworkFigures } from '../types.js';
import { round1 } from '../types.js';

export interface InterfaceCounters {
  name: string;
  rxBytes: number;
  rxPackets: number;
  rxErrors: number;
  rxDrops: number;
  txBytes: number;
  txPackets: number;
  txErrors: number;
  txDrops: number;
}

/** /proc/net/dev: two header lines, then `name: 8 receive fields 8 transmit fields`. */
export function parseNetDev(text: string): InterfaceCounters[] {
  const out: InterfaceCounters[] = [];
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0 || line.includes('|')) continue;
    const name = line.slice(0, colon).trim();
    const f = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    if (f.length < 16 || f.some((n) => !Number.isFinite(n))) continue;
    out.push({
      name,
      rxBytes: f[0]!,
      rxPackets: f[1]!,
      rxErrors: f[2]!,
      rxDrops: f[3]!,
      txBytes: f[8]!,
      txPackets: f[9]!,
      txErrors: f[10]!,
      txDrops: f[11]!,
    });
  }
  return out;
}

/** Per-second rates between two readings; a counter that went backwards (reset) counts as 0. */
export function networkRates(
  prev: Map<string, InterfaceCounters> | null,
  now: InterfaceCounters[],
  seconds: number,
): NetworkFigures {
  const rate = (a: number | undefined, b: number) =>
    a === undefined || seconds <= 0 || b < a ? 0 : round1((b - a) / seconds);
  const interfaces: InterfaceFigures[] = now
    .filter((c) => c.name !== 'lo')
    .map((c) => {
      const p = prev?.get(c.name);
      return {
        name: c.name,
        rx_bps: rate(p?.rxBytes, c.rxBytes),
        tx_bps: rate(p?.txBytes, c.txBytes),
        rx_pps: rate(p?.rxPackets, c.rxPackets),
        tx_pps: rate(p?.txPackets, c.txPackets),
        rx_errors: rate(p?.rxErrors, c.rxErrors),
        tx_errors: rate(p?.txErrors, c.txErrors),
        rx_drops: rate(p?.rxDrops, c.rxDrops),
        tx_drops: rate(p?.txDrops, c.txDrops),
      };
    });
  const sum = (k: 'rx_bps' | 'tx_bps' | 'rx_pps' | 'tx_pps') => round1(interfaces.reduce((s, i) => s + i[k], 0));
  return { rx_bps: sum('rx_bps'), tx_bps: sum('tx_bps'), rx_pps: sum('rx_pps'), tx_pps: sum('tx_pps'), interfaces };
}

export function networkCollector(deps: AgentDeps): Collector<'network'> {
  let prev: Map<string, InterfaceCounters> | null = null;
  let prevAt = 0;
  return {
    name: 'network',
    async collect() {
      if (deps.host.platform !== 'linux') throw new Error(`unavailable on ${deps.host.platform} (reads /proc/net/dev)`);
      const counters = parseNetDev(await deps.host.read('/proc/net/dev'));
      const at = deps.monotonic();
      const value = networkRates(prev, counters, prev ? (at - prevAt) / 1000 : 0);
      prev = new Map(counters.map((c) => [c.name, c]));
      prevAt = at;
      return { value };
    },
  };
}
