import type { AgentDeps } from '../../deps.js';
import type { Collector, DiskFigures } from '../types.js';
import { mb, round1 } from '../types.js';

export interface MountEntry {
  device: string;
  mount: string;
  fs: string;
}

/** Kernel and virtual filesystems that hold no user data (node_exporter's list, plus RAM-backed ones). */
const PSEUDO_FS = new Set([
  'autofs',
  'binfmt_misc',
  'bpf',
  'cgroup',
  'cgroup2',
  'configfs',
  'debugfs',
  'devpts',
  'devtmpfs',
  'efivarfs',
  'erofs',
  'fusectl',
  'fuse.lxcfs',
  'fuse.portal',
  'hugetlbfs',
  'iso9660',
  'mqueue',
  'nsfs',
  'proc',
  'procfs',
  'pstore',
  'ramfs',
  'rpc_pipefs',
  'securityfs',
  'selinuxfs',
  'squashfs',
  'sysfs',
  'tmpfs',
  'tracefs',
]);
const PSEUDO_MOUNT =
  /^\/(dev|proc|sys|run\/credentials\/.+|var\/lib\/docker\/.+|var\/lib\/containers\/storage\/.+|snap\/.+)($|\/)/;

/** /proc/mounts decodes `\040`-style escapes in paths. */
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, oct: string) => String.fromCharCode(Number.parseInt(oct, 8)));
}

export function parseMounts(text: string): MountEntry[] {
  const out: MountEntry[] = [];
  for (const line of text.split('\n')) {
    const [device, mount, fs] = line.trim().split(/\s+/);
    if (!device || !mount || !fs) continue;
    out.push({ device: unescapeMount(device), mount: unescapeMount(mount), fs });
  }
  return out;
}

/** The filesystems worth reporting: real ones, each device once (a bind mount repeats its device). */
export function realFilesystems(mounts: MountEntry[]): MountEntry[] {
  const seen = new Set<string>();
  const out: MountEntry[] = [];
  for (const m of mounts) {
    if (PSEUDO_FS.has(m.fs) || PSEUDO_MOUNT.test(m.mount)) continue;
    if (m.fs === 'overlay' && m.mount !== '/') continue; // container layers; a container's own root still counts
    const identity = m.device.startsWith('/') ? m.device : `${m.device}:${m.mount}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    out.push(m);
  }
  return out;
}

/**
 * Usage of every real filesystem. statfs on a hung network mount never returns; such a mount is
 * reported as an error and not asked again until its pending call settles, so stuck calls cannot
 * pile up and starve the I/O threads the other collectors need.
 */
export function disksCollector(deps: AgentDeps, timeoutMs: () => number): Collector<'disks'> {
  const pending = new Map<string, number>(); // mount -> when its unanswered statfs began
  const linux = deps.host.platform === 'linux';

  async function usage(mount: string): Promise<{ totalBytes: number; availBytes: number; freeBytes: number }> {
    const began = pending.get(mount);
    if (began !== undefined) {
      throw new Error(
        `statfs ${mount}: no answer for ${Math.round((deps.monotonic() - began) / 1000)} s (stuck mount)`,
      );
    }
    pending.set(mount, deps.monotonic());
    const call = deps.host.statfs(mount).finally(() => pending.delete(mount));
    let timer: NodeJS.Timeout | undefined;
    const limit = timeoutMs();
    try {
      return await Promise.race([
        call,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`statfs ${mount}: no answer within ${limit} ms`)), limit);
        }),
      ]);
    } finally {
      clearTimeout(timer);
      call.catch(() => {});
    }
  }

  return {
    name: 'disks',
    async collect() {
      const mounts = linux
        ? realFilesystems(parseMounts(await deps.host.read('/proc/mounts')))
        : [{ device: '', mount: '/', fs: 'unknown' }];
      const results = await Promise.allSettled(mounts.map((m) => usage(m.mount)));
      const disks: DiskFigures[] = [];
      const errors: string[] = [];
      results.forEach((r, i) => {
        const m = mounts[i]!;
        if (r.status === 'rejected') {
          errors.push((r.reason as Error).message);
          return;
        }
        const { totalBytes, freeBytes, availBytes } = r.value;
        if (totalBytes <= 0) return;
        const used = totalBytes - freeBytes;
        // Like df: the share of what non-root users can use (used + available).
        const usable = used + availBytes;
        disks.push({
          mount: m.mount,
          fs: m.fs,
          total_mb: mb(totalBytes),
          used_mb: mb(used),
          pct: usable > 0 ? round1((100 * used) / usable) : 0,
        });
      });
      if (!linux) errors.push(`only / is measured on ${deps.host.platform}`);
      return errors.length > 0 ? { value: disks, error: errors.join('; ') } : { value: disks };
    },
  };
}
