import { isLoopback, type Network, parseAddress } from '../lib/net.js';
import type { FeatureContext } from './context.js';
import { disjoint, type Element, elementOf } from './firewall.js';
import type { IpList } from './lists.js';

/**
 * Addresses never blocked: the whitelist, the peers of active SSH sessions (reported by detection),
 * the console this agent enrolled with (resolved through the deps' DNS every 10 minutes) and
 * loopback (a busy local database pool is not an attack, and banning it would cut the host off
 * from itself).
 */
export class Guard {
  private sshPeers = new Set<string>();
  private consoleIps = new Set<string>();
  /** Why the console address could not be resolved, if it could not. */
  error: string | null = null;

  constructor(
    private readonly ctx: FeatureContext,
    private readonly whitelist: IpList,
    private readonly consoleUrl: () => string | null,
  ) {}

  /** Why `net` may not be blocked, or null. */
  isAllowed(net: Network): string | null {
    const w = this.whitelist.covering(net);
    if (w) return `${net.text} is on the whitelist (${w.text}); the whitelist always wins`;
    if (this.sshPeers.has(net.text)) return `${net.text} is the address of an active SSH session`;
    if (this.consoleIps.has(net.text)) return `${net.text} is the address of the console this agent enrolled with`;
    if (isLoopback(net)) return `${net.text} is a loopback address: this host's own programs`;
    return null;
  }

  /** What besides the whitelist lets `net` through: an SSH session, the console, loopback. */
  allowances(net: Network): ('ssh_session' | 'console' | 'loopback')[] {
    const out: ('ssh_session' | 'console' | 'loopback')[] = [];
    if (isLoopback(net)) out.push('loopback');
    if (this.sshPeers.has(net.text)) out.push('ssh_session');
    if (this.consoleIps.has(net.text)) out.push('console');
    return out;
  }

  /** The `allow` set. */
  elements(): Element[] {
    const out: Element[] = [];
    for (const e of this.whitelist.stored()) out.push(elementOf(e.net));
    for (const ip of [...this.sshPeers, ...this.consoleIps]) {
      const n = parseAddress(ip);
      if (n) out.push(elementOf(n));
    }
    return disjoint(out);
  }

  setSshPeers(peers: Set<string>): void {
    if ([...peers].sort().join() === [...this.sshPeers].sort().join()) return;
    this.sshPeers = peers;
    this.ctx.markDirty('allow');
  }

  async refreshConsole(): Promise<void> {
    const url = this.consoleUrl();
    const next = new Set<string>();
    if (url) {
      try {
        const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
        const direct = parseAddress(host);
        if (direct) next.add(direct.text);
        else for (const a of await this.ctx.deps.resolve(host)) next.add(parseAddress(a)?.text ?? a);
      } catch (err) {
        this.error = `cannot resolve the console address: ${(err as Error).message}`;
        return;
      }
    }
    this.error = null;
    if ([...next].join() !== [...this.consoleIps].join()) {
      this.consoleIps = next;
      this.ctx.markDirty('allow');
    }
  }

  counts() {
    return { ssh_sessions: this.sshPeers.size, console: this.consoleIps.size };
  }
}
