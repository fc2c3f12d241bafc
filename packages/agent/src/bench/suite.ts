import { statfs } from 'node:fs/promises';
import os from 'node:os';
import type { AgentDeps, FsUsage } from '../deps.js';
import { readFacts } from '../measure/facts.js';
import { type CpuRunner, MAX_THREADS, measureCpu, measureCpuSpread, workerCpuRunner } from './cpu.js';
import { measureDisk } from './disk.js';
import { measureNetwork, type NetworkLink } from './network.js';
import { parseStealTimes, type StealTimes, stealPercent } from './steal.js';
import type { BenchLog, BenchmarkMeasurements, BenchmarkReport, BenchSettings, SectionName } from './types.js';

/** What one section may use: its working window, and a signal that fires when it overran. */
export interface SectionContext {
  windowMs: number;
  signal: AbortSignal;
}

export interface BenchSection<K extends SectionName = SectionName> {
  name: K;
  /** Share of the suite's time budget this section plans for. */
  share: number;
  run(ctx: SectionContext): Promise<NonNullable<BenchmarkMeasurements[K]>>;
}

/** The shares of the budget; the rest is slack for start-up and reporting. */
export const SHARES: Record<SectionName, number> = { cpu: 0.3, stability: 0.15, disk: 0.3, network: 0.2 };
/** A section past `share × OVERRUN` of the budget is stopped and reported as not measured. */
export const OVERRUN = 1.5;
/** After stopping a section, how long to wait for it to clean up (its temp file) before moving on. */
const SETTLE_MS = 2000;
/** `--quick`: at most this budget and this much disk. */
export const QUICK_SECONDS = 10;
export const QUICK_DISK_MB = 64;

/**
 * Runs the sections one after another within `budgetMs`. A section that fails, or overruns its
 * share, is null in the result with the reason in `skipped` (and in the log); the others still run.
 */
export async function runSections(
  sections: BenchSection[],
  o: { budgetMs: number; now(): number; log: BenchLog },
): Promise<{ measurements: BenchmarkMeasurements; skipped: Record<string, string> }> {
  const measurements: BenchmarkMeasurements = { cpu: null, disk: null, network: null, stability: null };
  const skipped: Record<string, string> = {};
  const end = o.now() + o.budgetMs;
  const skip = (name: SectionName, why: string) => {
    skipped[name] = why.slice(0, 500);
    o.log(`${name}: not measured: ${why}`);
  };
  for (const section of sections) {
    const left = end - o.now();
    if (left <= 0) {
      skip(
        section.name,
        `the suite reached its time limit (bench.max_seconds = ${o.budgetMs / 1000} s) before this section`,
      );
      continue;
    }
    const windowMs = section.share * o.budgetMs;
    const limitMs = Math.min(windowMs * OVERRUN, left);
    const controller = new AbortController();
    const running = section.run({ windowMs, signal: controller.signal });
    let timer: NodeJS.Timeout | undefined;
    const overran = new Promise<'overran'>((resolve) => {
      timer = setTimeout(() => resolve('overran'), limitMs);
    });
    try {
      const outcome = await Promise.race([running, overran]);
      if (outcome === 'overran') {
        controller.abort(new Error('time share used up'));
        await Promise.race([running.catch(() => {}), new Promise((r) => setTimeout(r, SETTLE_MS))]);
        skip(section.name, `did not finish within ${(limitMs / 1000).toFixed(1)} s, its share of the time limit`);
      } else {
        (measurements as Record<SectionName, unknown>)[section.name] = outcome;
      }
    } catch (err) {
      skip(section.name, (err as Error).message || String(err));
    } finally {
      clearTimeout(timer);
    }
  }
  return { measurements, skipped };
}

export interface SuiteOptions {
  deps: AgentDeps;
  settings: BenchSettings;
  /** `--quick`: a shorter budget and less disk. */
  quick?: boolean;
  /** The console's network endpoints, or null with the reason the section is skipped. */
  network: NetworkLink | { skip: string };
  log: BenchLog;
  /** Seam for tests: where the CPU work runs. */
  cpu?: CpuRunner;
}

/** The bench dir is written with the real file system, so its free space comes from there too. */
async function realStatfs(dir: string): Promise<FsUsage> {
  const s = await statfs(dir);
  return { totalBytes: s.blocks * s.bsize, freeBytes: s.bfree * s.bsize, availBytes: s.bavail * s.bsize };
}

async function readSteal(deps: AgentDeps): Promise<StealTimes | null> {
  if (deps.host.platform !== 'linux') return null;
  try {
    return parseStealTimes(await deps.host.read('/proc/stat'));
  } catch {
    return null;
  }
}

/** `model name` of /proc/cpuinfo, else what Node knows. */
async function cpuModel(deps: AgentDeps): Promise<string | undefined> {
  let model: string | undefined;
  try {
    model = /^model name\s*:\s*(.+)$/m.exec(await deps.host.read('/proc/cpuinfo'))?.[1];
  } catch {}
  model ??= os.cpus()[0]?.model;
  return model?.trim().slice(0, 200) || undefined;
}

/** The whole suite: hardware as the check-ins report it, then each section in its share of the budget. */
export async function runSuite(o: SuiteOptions): Promise<BenchmarkReport> {
  const { deps, log } = o;
  const started = deps.monotonic();
  const budgetMs = 1000 * (o.quick ? Math.min(QUICK_SECONDS, o.settings.maxSeconds) : o.settings.maxSeconds);
  const maxDiskMb = o.quick ? Math.min(QUICK_DISK_MB, o.settings.maxDiskMb) : o.settings.maxDiskMb;
  const facts = await readFacts(deps, null);
  const model = await cpuModel(deps);
  const hardware: BenchmarkReport['hardware'] = {
    cores: Math.max(1, facts.cores),
    mem_total_mb: facts.mem_total_mb,
    arch: facts.arch.slice(0, 32),
    ...(model ? { cpu_model: model } : {}),
  };
  const threads = Math.min(MAX_THREADS, hardware.cores);
  log(
    `suite: ${hardware.cores} cores, ${hardware.mem_total_mb} MB${model ? `, ${model}` : ''}; time limit ${budgetMs / 1000} s${o.quick ? ' (quick)' : ''}, disk at most ${maxDiskMb} MB in ${o.settings.dir}`,
  );
  const cpu = o.cpu ?? workerCpuRunner;
  let stealStart: Promise<StealTimes | null> | null = null;
  const sections: BenchSection[] = [
    {
      name: 'cpu',
      share: SHARES.cpu,
      run: (ctx) => {
        stealStart = readSteal(deps);
        return measureCpu({ run: cpu, threads, ...ctx, log });
      },
    },
    {
      name: 'stability',
      share: SHARES.stability,
      async run(ctx) {
        const before = await (stealStart ?? readSteal(deps));
        const cpu_cv_pct = await measureCpuSpread({ run: cpu, ...ctx, log });
        const after = await readSteal(deps);
        let steal_pct = 0;
        if (before && after) {
          steal_pct = stealPercent(before, after);
          log(`stability: CPU steal ${steal_pct.toFixed(2)} % during the CPU sections`);
        } else log('stability: steal time is not available on this host (no /proc/stat); counted as 0 %');
        return { cpu_cv_pct, steal_pct };
      },
    },
    {
      name: 'disk',
      share: SHARES.disk,
      run: (ctx) =>
        measureDisk({ dir: o.settings.dir, maxDiskMb, statfs: realStatfs, now: deps.monotonic, ...ctx, log }),
    },
    {
      name: 'network',
      share: SHARES.network,
      run: async (ctx) => {
        if ('skip' in o.network) throw new Error(o.network.skip);
        return measureNetwork({ link: o.network, now: deps.monotonic, ...ctx, log });
      },
    },
  ];
  const { measurements, skipped } = await runSections(sections, { budgetMs, now: deps.monotonic, log });
  const duration_ms = Math.max(0, Math.round(deps.monotonic() - started));
  log(`suite: finished in ${(duration_ms / 1000).toFixed(1)} s`);
  return { measurements, skipped, hardware, duration_ms };
}
