import ipaddr from 'ipaddr.js';

/**
 * Addresses no outgoing call may reach, whatever the settings: cloud metadata endpoints (AWS, GCP, Azure
 * IMDS and ECS, Alibaba, AWS IPv6) and Azure's host endpoint 168.63.129.16 (wire server, DNS, health probes).
 */
const METADATA = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254', '168.63.129.16']);
/** Ranges refused unless private targets are allowed (self-hosters watching a LAN). */
const PRIVATE_RANGES = new Set(['private', 'carrierGradeNat', 'loopback', 'uniqueLocal']);

export type TargetVerdict = { ok: true } | { ok: false; reason: string };

/** Classifies one resolved address; IPv4-mapped IPv6 is judged as the IPv4 address it carries. */
export function checkAddress(address: string, allowPrivate: boolean): TargetVerdict {
  if (!ipaddr.isValid(address)) return { ok: false, reason: `${address} is not an IP address` };
  // ipaddr.js reads `::127.0.0.1` (how glibc prints an IPv4-compatible address) as IPv4-mapped; the URL
  // parser's hex form of an IPv6 address is unambiguous.
  let ip = ipaddr.parse(address.includes(':') ? new URL(`http://[${address}]/`).hostname.slice(1, -1) : address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const normalized = ip.toString();
  // IPv4-compatible ::a.b.c.d (::/96 but :: and ::1) is deprecated (RFC 4291) and some stacks route it as the
  // IPv4 address inside, so it is refused outright rather than judged as the address it carries.
  if (ip.kind() === 'ipv6' && isIPv4Compatible(ip as ipaddr.IPv6)) {
    return { ok: false, reason: `${normalized} is an IPv4-compatible IPv6 address (deprecated)` };
  }
  if (METADATA.has(normalized)) return { ok: false, reason: `${normalized} is a cloud metadata address` };
  const range = ip.range();
  if (range === 'unicast') return { ok: true };
  if (PRIVATE_RANGES.has(range)) {
    return allowPrivate
      ? { ok: true }
      : {
          ok: false,
          reason: `${normalized} is a ${range} address; set PALISADE_ALLOW_PRIVATE_TARGETS=1 to allow private targets`,
        };
  }
  return { ok: false, reason: `${normalized} is a ${range} address` };
}

function isIPv4Compatible(ip: ipaddr.IPv6): boolean {
  const parts = ip.parts;
  if (parts.slice(0, 6).some((p) => p !== 0)) return false;
  return parts[6] !== 0 || parts[7]! > 1;
}
