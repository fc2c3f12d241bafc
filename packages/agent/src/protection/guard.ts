import { contains, isLoopback, type Network, parseAddress } from '../lib/net.js';
import type { FeatureContext } from './context.js';
import { disjoint, type Element, elementOf } from './firewall.js';
import type { IpList } from './lists.js';
import { loggedInHosts } from './ssh-sessions.js';

/**
 * Addresses never blocked: the whitelist, the peers of SSH sessions someone logged in to
 * (ssh-sessions.ts: connected, and in utmp or seen `Accepted` in sshd's log),
 * the console this agent enrolled with (the addresses kept with the enrolment, learnt the moment it
 * is stored, and its host resolved through the deps' DNS at each enrolment and every 10 minutes) and
 * loopback (a busy local database pool is not an attack, and banning it would cut the host off
 * from itself).
 */
export class Guard {
  private sshPeers = new Set<string>();
  /** Peers sshd's log said logged in, kept while they stay connected to an SSH port. */
  private accepted = new Set<string>();
  private consoleIps = new Set<string>();
  /** The console's addresses from the last DNS answer (kept until the next one). */
  private resolved = new Set<string>();
  /** Why the console address could not be resolved, if it could not. */
  error: string | null = null;

  constructor(
    private readonly ctx: FeatureContext,
    private readonly whitelist: IpList,
    private readonly consoleUrl: () => string | null,
    /** The console's addresses kept with the enrolment (resolved when it was made). */
    private readonly storedConsoleIps: () => string[] = () => [],
  ) {}

  /** Why `net` may not be blocked, or null. */
  isAllowed(net: Network): string | null {
    const w = this.whitelist.covering(net);
    if (w) return `${net.text} is on the whitelist (${w.text}); the whitelist always wins`;
    if (this.sshPeers.has(net.text)) return `${net.text} is the address of an active SSH session`;
    const console = this.consoleCovered(net);
    if (console)
      return console === net.text
        ? `${net.text} is the address of the console this agent enrolled with; blocking it would cut this server off from its console`
        : `${net.text} covers ${console}, the address of the console this agent enrolled with; blocking it would cut this server off from its console`;
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

  /** A console address inside `net`, if any. */
  private consoleCovered(net: Network): string | null {
    if (this.consoleIps.has(net.text)) return net.text;
    for (const ip of this.consoleIps) {
      const a = parseAddress(ip);
      if (a && contains(net, a)) return a.text;
    }
    return null;
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

  /** sshd logged a log-in from `ip` (a block pattern's source read the line). */
  sessionAccepted(ip: string): void {
    this.accepted.add(ip);
  }

  /**
   * The peers connected to an SSH port now (detection's socket scan): the sessions among them are
   * the ones in utmp or logged in according to sshd. A guesser is connected too, but never either.
   */
  async setSshPeers(connected: Set<string>): Promise<void> {
    const logged = await loggedInHosts(this.ctx.deps.logs?.root ?? '/');
    for (const ip of this.accepted) if (!connected.has(ip)) this.accepted.delete(ip);
    const peers = new Set([...connected].filter((ip) => logged.has(ip) || this.accepted.has(ip)));
    if ([...peers].sort().join() === [...this.sshPeers].sort().join()) return;
    this.sshPeers = peers;
    this.ctx.markDirty('allow');
  }

  /** The host of the console URL when it is an address (no DNS needed), else null. */
  private literalConsole(): string | null {
    const url = this.consoleUrl();
    if (!url) return null;
    try {
      return parseAddress(new URL(url).hostname.replace(/^\[|\]$/g, ''))?.text ?? null;
    } catch {
      return null;
    }
  }

  /**
   * Takes the console's addresses from the enrolment at once (no DNS): called when an enrolment is
   * stored or loaded, so a new enrolment protects its console before the first block can reach it.
   */
  learnConsole(): void {
    const next = new Set<string>();
    if (this.consoleUrl()) {
      for (const ip of this.storedConsoleIps()) {
        const a = parseAddress(ip);
        if (a) next.add(a.text);
      }
      const literal = this.literalConsole();
      if (literal) next.add(literal);
      for (const ip of this.resolved) next.add(ip);
    }
    if ([...next].sort().join() !== [...this.consoleIps].sort().join()) {
      this.consoleIps = next;
      this.ctx.markDirty('allow');
    }
  }

  async refreshConsole(): Promise<void> {
    const url = this.consoleUrl();
    this.learnConsole();
    const next = new Set<string>();
    if (url) {
      try {
        const host = new URL(url).hostname.replace(/^\[|\]$/g, '');
        if (!parseAddress(host))
          for (const a of await this.ctx.deps.resolve(host)) next.add(parseAddress(a)?.text ?? a);
      } catch (err) {
        this.error = `cannot resolve the console address: ${(err as Error).message}`;
        return;
      }
    }
    this.error = null;
    this.resolved = next;
    this.learnConsole();
  }

  counts() {
    return { ssh_sessions: this.sshPeers.size, console: this.consoleIps.size };
  }
}
