import { close, open, read, statfs as statfsCb } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';

/** What a filesystem's statfs reports, in bytes. */
export interface FsUsage {
  totalBytes: number;
  freeBytes: number;
  availBytes: number;
}

/**
 * The host as the collectors see it. `read` and `statfs` take absolute host paths (`/proc/stat`);
 * the real implementation prefixes `root`, so golden-file tests point it at a fixture copy.
 */
export interface HostSource {
  platform: NodeJS.Platform;
  read(path: string): Promise<string>;
  statfs(path: string): Promise<FsUsage>;
  hostname(): string;
  machine(): string;
  fallbackKernel(): string;
  fallbackOs(): string;
  networkAddresses(): string[];
  /** Portable fallbacks for platforms without /proc. */
  cpuTimes(): { busy: number; total: number; cores: number };
  loadavg(): [number, number, number];
  memory(): { totalBytes: number; freeBytes: number };
  uptimeS(): number;
}

/** Side effects every part of the agent takes from here instead of reaching for globals. */
export interface AgentDeps {
  /** Wall clock, epoch ms. */
  clock: () => number;
  /** Monotonic clock in ms, for rates. */
  monotonic: () => number;
  host: HostSource;
}

/** Buffers `readText` lends itself, so reading /proc every interval leaves no garbage behind. */
const spareBuffers: Buffer[] = [];
const SPARE_MAX = 8;

/**
 * A small file as UTF-8. /proc files report size 0, and readFile reads each of them into a fresh
 * 64 KiB buffer: about 1 MB of garbage a sample that only a GC frees, which made the idle agent
 * hold several MB more (docs/performance.md, "Agent memory"). This reads into a kept buffer,
 * doubled while the file fills it. The callback forms: fs.promises costs several times more CPU.
 */
export function readText(file: string): Promise<string> {
  return new Promise((resolve, reject) => {
    open(file, 'r', (err, fd) => {
      if (err) return reject(err);
      let buf = spareBuffers.pop() ?? Buffer.allocUnsafe(16 * 1024);
      let filled = 0;
      const done = (error: Error | null) => {
        const text = error ? '' : buf.toString('utf8', 0, filled);
        if (spareBuffers.length < SPARE_MAX && buf.length <= 1024 * 1024) spareBuffers.push(buf);
        close(fd, () => (error ? reject(error) : resolve(text)));
      };
      const next = () =>
        read(fd, buf, filled, buf.length - filled, null, (error, n) => {
          if (error || n === 0) return done(error);
          filled += n;
          if (filled === buf.length) {
            const bigger = Buffer.allocUnsafe(buf.length * 2);
            buf.copy(bigger);
            buf = bigger;
          }
          next();
        });
      next();
    });
  });
}

/** The real host, with `/proc`, `/sys` and `/etc` read under `root` (normally `/`). */
export function realHost(root = '/', platform: NodeJS.Platform = process.platform): HostSource {
  const under = (path: string) => (root === '/' ? path : join(root, path));
  return {
    platform,
    read: (path) => readText(under(path)),
    statfs: (path) =>
      new Promise((resolve, reject) => {
        statfsCb(under(path), (err, s) => {
          if (err) reject(err);
          else
            resolve({
              totalBytes: s.blocks * s.bsize,
              freeBytes: s.bfree * s.bsize,
              availBytes: s.bavail * s.bsize,
            });
        });
      }),
    hostname: () => os.hostname(),
    machine: () => os.machine(),
    fallbackKernel: () => os.release(),
    fallbackOs: () => `${os.type()} ${os.release()}`,
    networkAddresses: () =>
      Object.values(os.networkInterfaces())
        .flatMap((list) => list ?? [])
        .filter((a) => !a.internal)
        .map((a) => a.address),
    cpuTimes: () => {
      const cpus = os.cpus();
      let busy = 0;
      let total = 0;
      for (const c of cpus) {
        const t = c.times;
        busy += t.user + t.nice + t.sys + t.irq;
        total += t.user + t.nice + t.sys + t.irq + t.idle;
      }
      return { busy, total, cores: cpus.length };
    },
    loadavg: () => os.loadavg() as [number, number, number],
    memory: () => ({ totalBytes: os.totalmem(), freeBytes: os.freemem() }),
    uptimeS: () => os.uptime(),
  };
}

export function realDeps(): AgentDeps {
  return { clock: () => Date.now(), monotonic: () => performance.now(), host: realHost() };
}
