import { createRequire } from 'node:module';
import { isIPv4, isIPv6 } from 'node:net';
import type IpAddr from 'ipaddr.js';

/**
 * The one address parser of Palisade: the agent reads every list entry, log address and client with
 * it (packages/agent/src/lib/net.ts), and the console checks fleet list entries with it before they
 * are stored (docs/protection.md, "Fleet policies"), so both refuse and normalise the same texts.
 * No zod: the agent loads this module on its own (`@palisade/protocol/networks`).
 */

// ipaddr.js is CommonJS. `import` of a CommonJS module makes Node scan it for named exports,
// which costs about 9 MB resident for the agent's lifetime; `require` costs about 1 MB. The
// bundle build (scripts/package.mjs) turns `createRequire(import.meta.url)(…)` into an inlined require.
export const ipaddr: typeof IpAddr = createRequire(import.meta.url)('ipaddr.js');
export type IpAddress = IpAddr.IPv4 | IpAddr.IPv6;
export type IPv6Address = IpAddr.IPv6;

/**
 * One address. ipaddr.js (like inet_aton) also reads `010.1.1.1` as octal 8.1.1.1, `1.2.3` as
 * 1.2.0.3 and `0x7f.1` as hex; those spellings mean different addresses to different programs, so
 * only canonical dotted quads (no leading zeros, four parts of 0-255) and what `net.isIPv6` accepts
 * (without a zone id) are read. Null for anything else.
 */
export function parseIp(text: string): IpAddress | null {
  if (isIPv4(text) || (isIPv6(text) && !text.includes('%'))) return ipaddr.parse(text);
  return null;
}

/** `address/prefix` with a canonical address and a decimal prefix without leading zeros; null otherwise. */
export function parseCidr(text: string): [IpAddress, number] | null {
  const m = /^([^/]+)\/(0|[1-9][0-9]{0,2})$/.exec(text);
  if (!m) return null;
  const addr = parseIp(m[1]!);
  const prefix = Number(m[2]);
  if (!addr || prefix > (addr.kind() === 'ipv4' ? 32 : 128)) return null;
  return [addr, prefix];
}

/** One IP or CIDR, normalized: host bits cleared, IPv4-mapped v6 turned into v4, single hosts without a prefix. */
export interface Network {
  /** Canonical text: `203.0.113.7`, `198.51.100.0/24`, `2001:db8::/64`. */
  text: string;
  family: 4 | 6;
  /** First address as an integer. */
  start: bigint;
  prefix: number;
}

export const familyBits = (family: 4 | 6) => (family === 4 ? 32 : 128);

function toBigInt(bytes: number[]): bigint {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return n;
}

export function bigIntToAddress(n: bigint, family: 4 | 6): string {
  const len = family === 4 ? 4 : 16;
  const bytes: number[] = new Array(len);
  for (let i = len - 1; i >= 0; i--) {
    bytes[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return ipaddr.fromByteArray(bytes).toString();
}

/**
 * Reads one IP or CIDR (v4 or v6) with the strict parser above; null when it is not one.
 * Host bits are cleared and IPv4-mapped IPv6 becomes IPv4.
 */
export function readNetwork(text: string): Network | null {
  let addr: IpAddress;
  let prefix: number;
  if (text.includes('/')) {
    const cidr = parseCidr(text);
    if (!cidr) return null;
    [addr, prefix] = cidr;
  } else {
    const ip = parseIp(text);
    if (!ip) return null;
    addr = ip;
    prefix = addr.kind() === 'ipv4' ? 32 : 128;
  }
  if (addr.kind() === 'ipv6' && (addr as IPv6Address).isIPv4MappedAddress()) {
    if (prefix < 96) return null;
    addr = (addr as IPv6Address).toIPv4Address();
    prefix -= 96;
  }
  const family: 4 | 6 = addr.kind() === 'ipv4' ? 4 : 6;
  const width = BigInt(familyBits(family));
  const mask = ((1n << width) - 1n) ^ ((1n << (width - BigInt(prefix))) - 1n);
  const start = toBigInt(addr.toByteArray()) & mask;
  const host = bigIntToAddress(start, family);
  return { text: prefix === familyBits(family) ? host : `${host}/${prefix}`, family, start, prefix };
}

/** The last address of a network, as an integer. */
export function networkEnd(n: Network): bigint {
  return n.start | ((1n << BigInt(familyBits(n.family) - n.prefix)) - 1n);
}

export function contains(outer: Network, inner: Network): boolean {
  if (outer.family !== inner.family || outer.prefix > inner.prefix) return false;
  return inner.start >= outer.start && networkEnd(inner) <= networkEnd(outer);
}

/** True when the two networks share any address. */
export function overlaps(a: Network, b: Network): boolean {
  return contains(a, b) || contains(b, a);
}
