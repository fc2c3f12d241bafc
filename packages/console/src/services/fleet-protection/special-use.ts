import { type Network, overlaps, readNetwork } from '@palisade/protocol/networks';

/**
 * Ranges no fleet entry may cover (docs/protection.md, "What a fleet may hold"). Kept in the console:
 * `@palisade/protocol`'s index is also the web's, which must not load the address parser.
 */
const nets = (texts: string[]) => texts.map((t) => readNetwork(t)!);
/** Never on a fleet list, whoever asks: blocking them breaks the host or means nothing. */
const SPECIAL_USE: { net: Network; what: string }[] = [
  ...nets(['0.0.0.0/8', '::/128']).map((net) => ({ net, what: 'unspecified (0.0.0.0/8, ::)' })),
  ...nets(['127.0.0.0/8', '::1/128']).map((net) => ({ net, what: 'loopback' })),
  ...nets(['169.254.0.0/16', 'fe80::/10']).map((net) => ({ net, what: 'link-local (incl. 169.254.169.254)' })),
  ...nets(['224.0.0.0/4', 'ff00::/8']).map((net) => ({ net, what: 'multicast' })),
  ...nets(['240.0.0.0/4']).map((net) => ({ net, what: 'reserved or broadcast (240.0.0.0/4, 255.255.255.255)' })),
];
/** Private ranges: refused in reported bans unless the policy opts in (`allow_private`). */
const PRIVATE: Network[] = nets(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7']);

/** The special-use range `net` overlaps, in words; null when it overlaps none. */
export function specialUse(net: Network): string | null {
  return SPECIAL_USE.find((s) => overlaps(s.net, net))?.what ?? null;
}

/** True when `net` overlaps a private range (RFC 1918, CGNAT, unique local). */
export function isPrivate(net: Network): boolean {
  return PRIVATE.some((p) => overlaps(p, net));
}
