// Per-interface packet and byte rates from /proc/net/dev, and the learned per-hour-of-week baseline.
import {
  BASELINE_SLOTS,
  type Baseline as BaselineData,
  baselineSchema,
  checkControl,
} from '@palisade/protocol/control-schemas/standalone';
import { InputError } from '../lib/net.js';

export interface Counters {
  rxBytes: number;
  rxPackets: number;
}

/** Receive counters per interface (loopback left out). */
export function parseNetDev(text: string): Map<string, Counters> {
  const out = new Map<string, Counters>();
  for (const line of text.split('\n').slice(2)) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    if (name === 'lo') continue;
    const f = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/)
      .map(Number);
    if (f.length < 2) continue;
    out.set(name, { rxBytes: f[0]!, rxPackets: f[1]! });
  }
  return out;
}

export const SLOTS = BASELINE_SLOTS;
export const SLOT_SAMPLES = 60;
const MIN_SAMPLES = 10;

/** The hour of the week (0 = Monday 00:00 UTC … 167), the baseline's slot. */
export function hourOfWeek(ms: number): number {
  const d = new Date(ms);
  return ((d.getUTCDay() + 6) % 7) * 24 + d.getUTCHours();
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Median and scaled median absolute deviation: robust to the outliers an attack leaves in history. */
export function robustStats(values: number[]): { median: number; spread: number } {
  const m = median(values);
  const mad = median(values.map((v) => Math.abs(v - m)));
  return { median: m, spread: 1.4826 * mad };
}

/** One metric of one interface: the last SLOT_SAMPLES minute averages of each hour of the week. */
class SlotHistory {
  samples: number[][] = Array.from({ length: SLOTS }, () => []);

  push(slot: number, value: number) {
    const list = this.samples[slot]!;
    list.push(value);
    if (list.length > SLOT_SAMPLES) list.shift();
  }

  stats(slot: number): { median: number; spread: number } | null {
    const list = this.samples[slot]!;
    if (list.length >= MIN_SAMPLES) return robustStats(list);
    // A slot not learned yet: the whole week pooled, once there is enough of it.
    const pooled = this.samples.flat();
    return pooled.length >= MIN_SAMPLES * 3 ? robustStats(pooled) : null;
  }
}

export type BaselineExport = BaselineData;

/** Learns minute averages per interface and slot; judges a current rate against them. */
export class Baseline {
  private ifaces = new Map<string, { pps: SlotHistory; bps: SlotHistory }>();
  private minute = new Map<string, { slot: number; minute: number; pps: number; bps: number; n: number }>();
  changed = false;

  private history(name: string) {
    let h = this.ifaces.get(name);
    if (!h) {
      h = { pps: new SlotHistory(), bps: new SlotHistory() };
      this.ifaces.set(name, h);
    }
    return h;
  }

  /** Adds one reading; a finished minute becomes one sample of its slot. */
  learn(name: string, now: number, pps: number, bps: number): void {
    const minute = Math.floor(now / 60_000);
    const cur = this.minute.get(name);
    if (cur && cur.minute !== minute && cur.n > 0) {
      const h = this.history(name);
      h.pps.push(cur.slot, cur.pps / cur.n);
      h.bps.push(cur.slot, cur.bps / cur.n);
      this.changed = true;
    }
    if (!cur || cur.minute !== minute) this.minute.set(name, { slot: hourOfWeek(now), minute, pps, bps, n: 1 });
    else {
      cur.pps += pps;
      cur.bps += bps;
      cur.n++;
    }
  }

  /** The rate above which traffic counts as excess, or null while nothing is learned. */
  limit(name: string, now: number, metric: 'pps' | 'bps', factor: number): number | null {
    const h = this.ifaces.get(name);
    const s = h?.[metric].stats(hourOfWeek(now));
    if (!s) return null;
    return s.median + factor * Math.max(s.spread, 0.1 * s.median, 1);
  }

  export(): BaselineExport {
    const interfaces: BaselineExport['interfaces'] = {};
    for (const [name, h] of this.ifaces) interfaces[name] = { pps: h.pps.samples, bps: h.bps.samples };
    return { version: 1, slot_samples: SLOT_SAMPLES, interfaces };
  }

  /** Replaces what is learned with a saved or imported baseline, checked with the control schema. */
  import(raw: unknown): number {
    const checked = checkControl(baselineSchema, raw);
    if (!checked.ok) throw new InputError(checked.problem);
    return this.replace(checked.value);
  }

  replace(baseline: BaselineData): number {
    const next = new Map<string, { pps: SlotHistory; bps: SlotHistory }>();
    for (const [name, v] of Object.entries(baseline.interfaces)) {
      const h = { pps: new SlotHistory(), bps: new SlotHistory() };
      for (const metric of ['pps', 'bps'] as const)
        v[metric].forEach((list, i) => {
          h[metric].samples[i] = list.slice(-SLOT_SAMPLES);
        });
      next.set(name, h);
    }
    this.ifaces = next;
    this.changed = true;
    return next.size;
  }

  clear(): void {
    this.ifaces.clear();
    this.minute.clear();
    this.changed = true;
  }

  /** Samples learned, for /metrics. */
  samples(): number {
    let n = 0;
    for (const h of this.ifaces.values()) for (const s of h.pps.samples) n += s.length;
    return n;
  }
}
