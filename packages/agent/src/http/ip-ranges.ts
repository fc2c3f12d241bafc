import { type IPv6Address, type IpAddress, ipaddr } from '../lib/ipaddr.js';

/** One whitelist entry: an address range, kept with the text it came from. */
export interface NetworkRange {
  text: string;
  range: [IpAddress, number];
}

/** Parses one IP or CIDR (v4 or v6); IPv4-mapped IPv6 ranges become plain IPv4 ranges. */
export function parseNetwork(text: string): NetworkRange {
  let addr: IpAddress;
  let prefix: number;
  if (text.includes('/')) {
    if (!ipaddr.isValidCIDR(text)) throw new Error(`"${text}" is not an IP address or CIDR range`);
    [addr, prefix] = ipaddr.parseCIDR(text);
  } else {
    if (!ipaddr.isValid(text)) throw new Error(`"${text}" is not an IP address or CIDR range`);
    addr = ipaddr.parse(text);
    prefix = addr.kind() === 'ipv4' ? 32 : 128;
  }
  if (addr.kind() === 'ipv6' && (addr as IPv6Address).isIPv4MappedAddress() && prefix >= 96) {
    return { text, range: [(addr as IPv6Address).toIPv4Address(), prefix - 96] };
  }
  return { text, range: [addr, prefix] };
}

/** A comma- or space-separated list of IPs and CIDRs; an empty string is an empty list. */
export function parseNetworkList(text: string): NetworkRange[] {
  return text
    .split(/[\s,]+/)
    .filter((t) => t !== '')
    .map(parseNetwork);
}

/** The client address as a comparable value; `::ffff:1.2.3.4` becomes `1.2.3.4`. */
export function parseClientAddress(address: string | undefined): IpAddress | null {
  if (!address) return null;
  const bare = address.replace(/%.*$/, ''); // zone id of link-local v6
  if (!ipaddr.isValid(bare)) return null;
  return ipaddr.process(bare);
}

export function isInside(address: IpAddress, ranges: NetworkRange[]): boolean {
  return ranges.some(({ range: [net, prefix] }) => {
    if (net.kind() !== address.kind()) return false;
    return address.match(net, prefix);
  });
}
