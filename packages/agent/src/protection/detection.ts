import type { Baseline as BaselineData } from '@palisade/protocol/control-schemas/standalone';
import { isLoopback, parseAddress } from '../lib/net.js';
import type { AttackResponse } from './attack-response.js';
import type { FeatureContext } from './context.js';
import type { Guard } from './guard.js';
import type { ListBook } from './list-book.js';
import { countSockets, type SocketTable } from './sockets.js';
import type { StateFile } from './store.js';
import { Baseline, parseNetDev } from './traffic.js';

/**
 * Detection from the kernel's counters: connection and SYN floods per source (/proc/net/tcp*),
 * SSH peers for the guard, and receive traffic against a learned per-hour baseline (baseline.json).
 */
export class Detection {
  private baseline = new Baseline();
  private file: StateFile<unknown>;
  private netPrev: { at: number; counters: Map<string, { rxBytes: number; rxPackets: number }> } | null = null;
  /** The receive rates of the last reading, all interfaces. */
  rates = { pps: 0, bps: 0 };
  private trafficExcess = new Map<string, number>();
  private lastSockets: SocketTable | null = null;
  private scanGate: { at: number; opens: number } | null = null;

  constructor(
    private readonly ctx: FeatureContext,
    private readonly book: ListBook,
    private readonly guard: Guard,
    private readonly response: AttackResponse,
  ) {
    this.file = ctx.store.json<unknown>('baseline.json', null);
    try {
      const saved = this.file.read();
      if (saved) this.baseline.import(saved);
      this.baseline.changed = false;
    } catch (err) {
      ctx.log('warn', `protection: the saved baseline is not usable (${(err as Error).message}); learning afresh`);
    }
  }

  /**
   * Reading /proc/net/tcp makes the kernel walk its whole socket hash, which costs more than every
   * other measurement together on an idle host. So /proc/net/snmp (two counters) decides: the full
   * table is read only when enough connections exist or were opened for a flood to be possible,
   * and every 10 s regardless (to follow SSH sessions).
   */
  private async socketScanNeeded(now: number): Promise<boolean> {
    const settings = this.ctx.settings();
    let snmp: string;
    try {
      snmp = await this.ctx.deps.host.read('/proc/net/snmp');
    } catch {
      return true;
    }
    const lines = snmp.split('\n').filter((l) => l.startsWith('Tcp:'));
    const names = lines[0]?.split(/\s+/) ?? [];
    const values = lines[1]?.split(/\s+/).map(Number) ?? [];
    const estab = values[names.indexOf('CurrEstab')];
    const opens = values[names.indexOf('PassiveOpens')];
    if (estab === undefined || opens === undefined) return true;
    const last = this.scanGate;
    const due =
      last === null ||
      now - last.at >= 10_000 ||
      estab >= settings.connLimit ||
      opens - last.opens >= Math.min(settings.synLimit, settings.connLimit);
    if (due) this.scanGate = { at: now, opens };
    return due;
  }

  /** Follows SSH sessions and reports connection and SYN floods (banned). */
  async checkSockets(now: number) {
    const settings = this.ctx.settings();
    if (!(await this.socketScanNeeded(now))) {
      if (this.response.activeCount === 0) return;
    }
    let texts: string[];
    try {
      texts = await Promise.all(
        ['/proc/net/tcp', '/proc/net/tcp6'].map((p) => this.ctx.deps.host.read(p).catch(() => '')),
      );
    } catch {
      return;
    }
    const table = countSockets(texts, settings.sshPorts);
    this.lastSockets = table;
    await this.guard.setSshPeers(table.sshPeers);
    const floods: Record<'conn_flood' | 'syn_flood', { ip: string; hits: number }[]> = {
      conn_flood: [],
      syn_flood: [],
    };
    for (const [ip, c] of table.sources) {
      // A banned source's dead connections linger in the table until they time out; they are handled.
      // Loopback is the host's own programs (a local database pool), never a flood.
      if (c.established >= settings.connLimit || c.synRecv >= settings.synLimit) {
        const net = parseAddress(ip);
        if (net && (this.book.isBanned(net) || isLoopback(net))) continue;
      }
      if (c.established >= settings.connLimit) floods.conn_flood.push({ ip, hits: c.established });
      if (c.synRecv >= settings.synLimit) floods.syn_flood.push({ ip, hits: c.synRecv });
    }
    for (const kind of ['conn_flood', 'syn_flood'] as const) {
      if (floods[kind].length > 0) this.response.report({ key: kind, kind, now, sources: floods[kind] });
    }
  }

  /** Learns the receive baseline and reports traffic above it (alert only). */
  async checkTraffic(now: number) {
    const settings = this.ctx.settings();
    let text: string;
    try {
      text = await this.ctx.deps.host.read('/proc/net/dev');
    } catch {
      return;
    }
    const counters = parseNetDev(text);
    const prev = this.netPrev;
    this.netPrev = { at: now, counters };
    if (!prev || now <= prev.at) return;
    const seconds = (now - prev.at) / 1000;
    let pps = 0;
    let bps = 0;
    for (const [name, c] of counters) {
      const p = prev.counters.get(name);
      if (!p || c.rxPackets < p.rxPackets) continue;
      const ipps = (c.rxPackets - p.rxPackets) / seconds;
      const ibps = ((c.rxBytes - p.rxBytes) * 8) / seconds;
      pps += ipps;
      bps += ibps;
      const key = `traffic:${name}`;
      const limitPps = this.baseline.limit(name, now, 'pps', settings.trafficFactor);
      const limitBps = this.baseline.limit(name, now, 'bps', settings.trafficFactor);
      const excess =
        ipps >= settings.trafficMinPps &&
        ((limitPps !== null && ipps > limitPps) || (limitBps !== null && ibps > limitBps));
      const streak = excess ? (this.trafficExcess.get(name) ?? 0) + 1 : 0;
      this.trafficExcess.set(name, streak);
      // Two readings in a row: one burst is not an attack.
      if (streak >= 2) {
        const top = [...(this.lastSockets?.sources ?? new Map())]
          .map(([ip, s]) => ({ ip, hits: s.established + s.synRecv }))
          .sort((a, b) => b.hits - a.hits)
          .slice(0, 10);
        const rates = { pps: ipps, bps: ibps };
        this.response.report({ key, kind: 'traffic', now, sources: top, target: name, rates, ban: false });
      } else if (!this.response.isActive(key)) this.baseline.learn(name, now, ipps, ibps);
    }
    this.rates = { pps, bps };
  }

  /** Writes the baseline when it learned something since the last save. */
  saveBaseline(): void {
    if (!this.baseline.changed) return;
    this.file.write(this.baseline.export());
    this.baseline.changed = false;
  }

  baselineSamples() {
    return this.baseline.samples();
  }

  baselineExport() {
    return this.baseline.export();
  }

  baselineImport(body: BaselineData) {
    const interfaces = this.baseline.replace(body);
    this.saveBaseline();
    return { imported: true, interfaces };
  }

  baselineDelete() {
    this.baseline.clear();
    this.saveBaseline();
    return { deleted: true };
  }
}
