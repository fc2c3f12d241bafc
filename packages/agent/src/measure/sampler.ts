import type { AgentDeps } from '../deps.js';
import { cpuCollector } from './collectors/cpu.js';
import { disksCollector } from './collectors/disks.js';
import { loadCollector } from './collectors/load.js';
import { memoryCollector } from './collectors/memory.js';
import { networkCollector } from './collectors/network.js';
import { uptimeCollector } from './collectors/uptime.js';
import type { Collector, Sample } from './types.js';

export interface SamplerOptions {
  intervalMs: number;
  history: number;
  collectorTimeoutMs: number;
}

export function defaultCollectors(deps: AgentDeps, timeoutMs: () => number): Collector[] {
  return [
    cpuCollector(deps),
    loadCollector(deps),
    memoryCollector(deps),
    // Each mount gets half the collector's time, so the collector can still answer with the others.
    disksCollector(deps, () => Math.max(5, Math.floor(timeoutMs() / 2))),
    networkCollector(deps),
    uptimeCollector(deps),
  ] as Collector[];
}

/**
 * Measures on a fixed interval and keeps a short ring of samples. Collectors run side by side,
 * each bounded by `collectorTimeoutMs`; one that has not answered yet is not started again.
 */
export class Sampler {
  private readonly ring: Sample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Map<string, number>();
  private running: Promise<Sample> | null = null;

  constructor(
    private readonly deps: AgentDeps,
    private options: SamplerOptions,
    private readonly collectors: Collector[] = defaultCollectors(deps, () => this.options.collectorTimeoutMs),
  ) {}

  latest(): Sample | undefined {
    return this.ring[this.ring.length - 1];
  }

  recent(): readonly Sample[] {
    return this.ring;
  }

  /** Starts the interval; the first round runs at once. */
  start(): Promise<Sample> {
    const first = this.measure();
    this.schedule();
    return first;
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  configure(options: SamplerOptions): void {
    const restart = options.intervalMs !== this.options.intervalMs && this.timer !== undefined;
    this.options = options;
    while (this.ring.length > options.history) this.ring.shift();
    if (restart) {
      this.stop();
      this.schedule();
    }
  }

  private schedule() {
    this.timer = setInterval(() => {
      if (!this.running) void this.measure();
    }, this.options.intervalMs);
  }

  /** One round: every collector, each within its time bound. */
  async measure(): Promise<Sample> {
    const round = this.round().finally(() => {
      this.running = null;
    });
    this.running = round;
    return round;
  }

  private async round(): Promise<Sample> {
    const sample: Sample = {
      ts: this.deps.clock(),
      cpu: null,
      load: null,
      memory: null,
      disks: null,
      network: null,
      uptime_s: null,
      errors: {},
    };
    await Promise.all(
      this.collectors.map(async (c) => {
        try {
          const { value, error } = await this.bounded(c);
          (sample as unknown as Record<string, unknown>)[c.name] = value;
          if (error) sample.errors[c.label ?? c.name] = error;
        } catch (err) {
          sample.errors[c.label ?? c.name] = (err as Error).message;
        }
      }),
    );
    this.ring.push(sample);
    while (this.ring.length > this.options.history) this.ring.shift();
    return sample;
  }

  private async bounded(c: Collector) {
    const began = this.inFlight.get(c.name);
    if (began !== undefined) {
      const s = Math.round((this.deps.monotonic() - began) / 1000);
      throw new Error(`the previous reading has not finished after ${s} s; skipped`);
    }
    this.inFlight.set(c.name, this.deps.monotonic());
    const call = c.collect().finally(() => this.inFlight.delete(c.name));
    const limit = this.options.collectorTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        call,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${limit} ms`)), limit);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      call.catch(() => {});
    }
  }
}
