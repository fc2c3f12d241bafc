import { createRequire } from 'node:module';
import { isIPv4, isIPv6 } from 'node:net';
import type IpAddr from 'ipaddr.js';

// ipaddr.js is CommonJS. `import` of a CommonJS module makes Node scan it for named exports,
// which costs about 9 MB resident for the agent's lifetime; `require` costs about 1 MB. The
// bundle build (scripts/package.mjs) turns `createRequire(import.meta.url)(…)` into an inlined require.
export const ipaddr: typeof IpAddr = createRequire(import.meta.url)('ipaddr.js');
export type IpAddress = IpAddr.IPv4 | IpAddr.IPv6;
export type IPv6Address = IpAddr.IPv6;

/**
 * The one address parser of the agent. ipaddr.js (like inet_aton) also reads `010.1.1.1` as octal
 * 8.1.1.1, `1.2.3` as 1.2.0.3 and `0x7f.1` as hex; those spellings mean different addresses to
 * different programs, so only canonical dotted quads (no leading zeros, four parts of 0-255) and
 * what `net.isIPv6` accepts (without a zone id) are read. Null for anything else.
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
