import ipaddr from 'ipaddr.js';

/** Addresses no outgoing call may reach, whatever the settings: cloud metadata endpoints. */
const METADATA = new Set(['169.254.169.254', '169.254.170.2', '100.100.100.200', 'fd00:ec2::254']);
/** Ranges refused unless private targets are allowed (self-hosters watching a LAN). */
const PRIVATE_RANGES = new Set(['private', 'carrierGradeNat', 'loopback', 'uniqueLocal']);

export type TargetVerdict = { ok: true } | { ok: false; reason: string };

/** Classifies one resolved address; IPv4-mapped IPv6 is judged as the IPv4 address it carries. */
export function checkAddress(address: string, allowPrivate: boolean): TargetVerdict {
  if (!ipaddr.isValid(address)) return { ok: false, reason: `${address} is not an IP address` };
  let ip = ipaddr.parse(address);
  if (ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress()) ip = (ip as ipaddr.IPv6).toIPv4Address();
  const normalized = ip.toString();
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
