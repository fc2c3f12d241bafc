/**
 * IP addresses and CIDR ranges as number ranges, to tell whether two list entries overlap. The
 * agent's lists hold only canonical spellings (docs/protection.md, "Lists"), so this reads those
 * and answers null for anything else.
 */
export interface AddressRange {
  family: 4 | 6;
  first: bigint;
  last: bigint;
}

function v4(text: string): bigint | null {
  const parts = text.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return null;
  return parts.reduce((n, p) => (n << 8n) | BigInt(p), 0n);
}

function v6(text: string): bigint | null {
  const halves = text.split('::');
  if (halves.length > 2) return null;
  const groups = (h: string) => (h === '' ? [] : h.split(':'));
  const head = groups(halves[0]!);
  const tail = halves.length === 2 ? groups(halves[1]!) : [];
  // An IPv4 tail (::ffff:192.0.2.1) is two groups.
  const last = tail.at(-1) ?? head.at(-1);
  const words: string[] = [];
  const four = last?.includes('.') ? v4(last) : null;
  if (last?.includes('.')) {
    if (four === null) return null;
    (tail.length > 0 ? tail : head).pop();
  }
  const fill = 8 - head.length - tail.length - (four !== null ? 2 : 0);
  if (halves.length === 1 ? fill !== 0 : fill < 1) return null;
  words.push(...head, ...Array(fill).fill('0'), ...tail);
  if (words.some((w) => !/^[0-9a-f]{1,4}$/i.test(w))) return null;
  let n = words.reduce((acc, w) => (acc << 16n) | BigInt(`0x${w}`), 0n);
  if (four !== null) n = (n << 32n) | four;
  return n;
}

/** `203.0.113.7`, `198.51.100.0/24`, `2001:db8::/48` as a range; null when it is none of these. */
export function addressRange(text: string): AddressRange | null {
  const [host = '', prefixText, extra] = text.split('/');
  if (extra !== undefined) return null;
  const family = host.includes(':') ? 6 : 4;
  const start = family === 4 ? v4(host) : v6(host);
  const width = family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? width : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : -1;
  if (start === null || prefix < 0 || prefix > width) return null;
  const hostBits = (1n << BigInt(width - prefix)) - 1n;
  return { family, first: start & ~hostBits, last: start | hostBits };
}

/** True when the two entries share any address (one holds the other, or they are the same). */
export function overlaps(a: string, b: string): boolean {
  const x = addressRange(a);
  const y = addressRange(b);
  return x !== null && y !== null && x.family === y.family && x.first <= y.last && y.first <= x.last;
}
