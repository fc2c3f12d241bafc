import { bigIntToAddress, familyBits as bits, contains, type Network, readNetwork } from '@palisade/protocol/networks';

// The parser itself is shared with the console (packages/protocol/src/networks.ts).
export { bigIntToAddress, contains, type Network, networkEnd, readNetwork } from '@palisade/protocol/networks';

/** A user-facing input problem; its message is the 400 reason. */
export class InputError extends Error {}

/** Parses one IP or CIDR from a request; throws an InputError naming the `ip` field and the text. */
export function parseNetwork(raw: unknown): Network {
  if (typeof raw !== 'string' || raw.trim() === '') throw new InputError('ip: expected an IP address or CIDR range');
  const text = raw.trim();
  const net = readNetwork(text);
  if (!net) throw new InputError(`ip: "${text.slice(0, 80)}" is not an IP address or CIDR range`);
  return net;
}

/** Parses a client or log address (a zone id is dropped); null when it is not one address. */
export function parseAddress(raw: string): Network | null {
  const n = readNetwork(raw.replace(/%.*$/, ''));
  return n && n.prefix === bits(n.family) ? n : null;
}

/** Refuses a network that covers every address of its family: on a block list it would block everything. */
export function refuseEverything(net: Network): string | null {
  if (net.prefix !== 0) return null;
  return `ip: ${net.text} covers every ${net.family === 4 ? 'IPv4' : 'IPv6'} address, so it would block everything`;
}

const LOOPBACK = [readNetwork('127.0.0.0/8')!, readNetwork('::1')!];

/** True for an address or range inside 127.0.0.0/8 or ::1: this host talking to itself. */
export function isLoopback(net: Network): boolean {
  return LOOPBACK.some((l) => contains(l, net));
}

/** The /24 (v4) or /64 (v6) an address belongs to, for prefix bans. */
export function sharedPrefix(n: Network): Network {
  const prefix = n.family === 4 ? 24 : 64;
  return parseNetwork(`${bigIntToAddress(n.start, n.family)}/${prefix}`);
}

/**
 * A set of networks answering "is this address inside any of them". Networks are indexed by
 * prefix length, so a lookup costs one map probe per distinct prefix length in use.
 */
export class NetworkSet {
  private byPrefix = new Map<string, Map<bigint, Network>>();
  private count = 0;

  constructor(networks: Iterable<Network> = []) {
    for (const n of networks) this.add(n);
  }

  get size(): number {
    return this.count;
  }

  add(n: Network): void {
    const key = `${n.family}/${n.prefix}`;
    let m = this.byPrefix.get(key);
    if (!m) {
      m = new Map();
      this.byPrefix.set(key, m);
    }
    if (!m.has(n.start)) this.count++;
    m.set(n.start, n);
  }

  /** The first network containing `n` (an address or a smaller network), or null. */
  find(n: Network): Network | null {
    const width = BigInt(bits(n.family));
    for (const [key, m] of this.byPrefix) {
      const [fam, p] = key.split('/');
      const prefix = Number(p);
      if (Number(fam) !== n.family || prefix > n.prefix) continue;
      const mask = ((1n << width) - 1n) ^ ((1n << (width - BigInt(prefix))) - 1n);
      const hit = m.get(n.start & mask);
      if (hit) return hit;
    }
    return null;
  }

  /** Any network of the set that overlaps `n` (contains it or lies inside it). */
  overlaps(n: Network): Network | null {
    const inside = this.find(n);
    if (inside) return inside;
    for (const m of this.byPrefix.values()) {
      for (const other of m.values()) if (contains(n, other)) return other;
    }
    return null;
  }
}

/** Drops networks contained in another of the list (nft interval sets refuse overlaps). */
export function withoutNested<T extends { net: Network }>(items: T[]): T[] {
  const sorted = [...items].sort((a, b) =>
    a.net.family !== b.net.family
      ? a.net.family - b.net.family
      : a.net.start < b.net.start
        ? -1
        : a.net.start > b.net.start
          ? 1
          : a.net.prefix - b.net.prefix,
  );
  const out: T[] = [];
  let last: T | null = null;
  for (const item of sorted) {
    if (last && contains(last.net, item.net)) continue;
    out.push(item);
    last = item;
  }
  return out;
}
