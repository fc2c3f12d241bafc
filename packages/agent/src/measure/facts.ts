import type { AgentDeps } from '../deps.js';
import { ipaddr, parseIp } from '../lib/ipaddr.js';
import { parseProcStat } from './collectors/cpu.js';
import { memoryFigures, parseMeminfo } from './collectors/memory.js';
import type { HostFacts } from './types.js';

/** PRETTY_NAME from /etc/os-release. */
export function parseOsRelease(text: string): string | null {
  const m = /^PRETTY_NAME=(.*)$/m.exec(text);
  if (!m) return null;
  return m[1]!.trim().replace(/^["']|["']$/g, '');
}

/** The first globally routable address of the host, if it has one (no outside service is asked). */
export function publicAddress(addresses: string[]): string | null {
  for (const a of addresses) {
    const parsed = parseIp(a.replace(/%.*$/, ''));
    if (!parsed) continue;
    const ip = ipaddr.process(parsed.toString());
    if (ip.range() === 'unicast') return ip.toString();
  }
  return null;
}

async function orNull<T>(p: Promise<T>): Promise<T | null> {
  try {
    return await p;
  } catch {
    return null;
  }
}

/** Reads the host's facts; each source falls back to what Node itself knows. */
export async function readFacts(deps: AgentDeps, configuredPublicIp: string | null): Promise<HostFacts> {
  const { host } = deps;
  const linux = host.platform === 'linux';
  const [osRelease, kernel, stat, meminfo] = await Promise.all([
    orNull(host.read('/etc/os-release')),
    linux ? orNull(host.read('/proc/sys/kernel/osrelease')) : null,
    linux ? orNull(host.read('/proc/stat')) : null,
    linux ? orNull(host.read('/proc/meminfo')) : null,
  ]);
  let cores = 0;
  try {
    if (stat) cores = parseProcStat(stat).cores;
  } catch {}
  if (cores === 0) cores = host.cpuTimes().cores;
  let memTotal: number | null = null;
  try {
    if (meminfo) memTotal = memoryFigures(parseMeminfo(meminfo)).total_mb;
  } catch {}
  return {
    hostname: host.hostname(),
    os: (osRelease && parseOsRelease(osRelease)) || host.fallbackOs(),
    kernel: kernel?.trim() || host.fallbackKernel(),
    arch: host.machine(),
    cores,
    mem_total_mb: memTotal ?? Math.round(host.memory().totalBytes / 1048576),
    public_ip: configuredPublicIp ?? publicAddress(host.networkAddresses()),
  };
}
