// The metrics whitelist: the same strict parser and network type as the protection lists.
import { contains, type Network, parseAddress, readNetwork } from './net.js';

/** One whitelist entry. */
export type NetworkRange = Network;

/** A comma- or space-separated list of IPs and CIDRs; an empty string is an empty list. */
export function parseNetworkList(text: string): NetworkRange[] {
  return text
    .split(/[\s,]+/)
    .filter((t) => t !== '')
    .map((t) => {
      const net = readNetwork(t);
      if (!net) throw new Error(`"${t.slice(0, 80)}" is not an IP address or CIDR range`);
      return net;
    });
}

/** The client address as a comparable value; `::ffff:1.2.3.4` becomes `1.2.3.4`, a zone id is dropped. */
export function parseClientAddress(address: string | undefined): Network | null {
  return address ? parseAddress(address) : null;
}

export function isInside(address: Network, ranges: NetworkRange[]): boolean {
  return ranges.some((range) => contains(range, address));
}
