import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Credential formats. Like GitHub's `ghp_` tokens: a prefix, at least 30 random base62 characters,
 * then a 6-character base62 CRC32 of the random part, so a typo is caught without a database look-up.
 */
export const TOKEN_PREFIXES = {
  personal: 'svc_',
  signingKey: 'svck_',
  daemon: 'dmn_',
  benchmark: 'bmt_',
  agentKey: 'agk_',
  enrolment: 'enr_',
} as const;

export type TokenKind = keyof typeof TOKEN_PREFIXES;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 32;
const CHECKSUM_CHARS = 6;

function toBase62(value: number, width: number): string {
  let out = '';
  let rest = value;
  while (rest > 0) {
    out = BASE62[rest % 62] + out;
    rest = Math.floor(rest / 62);
  }
  return out.padStart(width, '0');
}

function randomBase62(count: number): string {
  let out = '';
  // Rejection sampling keeps every character uniformly distributed (248 = 4 * 62).
  while (out.length < count) {
    for (const byte of randomBytes(count * 2)) {
      if (byte < 248 && out.length < count) out += BASE62[byte % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  // zlib is fetched here, not imported: the agent's one-file bundle would otherwise load it at start.
  return toBase62(process.getBuiltinModule('node:zlib').crc32(body), CHECKSUM_CHARS);
}

/** A new credential of the given kind: 32 random base62 characters (about 190 bits) and a checksum. */
export function generateToken(kind: TokenKind): string {
  const body = randomBase62(RANDOM_CHARS);
  return `${TOKEN_PREFIXES[kind]}${body}${checksum(body)}`;
}

/** True when `value` has the kind's prefix, only base62 characters, enough of them and a matching checksum. */
export function isWellFormedToken(kind: TokenKind, value: string): boolean {
  const prefix = TOKEN_PREFIXES[kind];
  if (!value.startsWith(prefix)) return false;
  const rest = value.slice(prefix.length);
  if (rest.length < 30 + CHECKSUM_CHARS || rest.length > 200 || !/^[0-9A-Za-z]+$/.test(rest)) return false;
  const body = rest.slice(0, -CHECKSUM_CHARS);
  return checksum(body) === rest.slice(-CHECKSUM_CHARS);
}

/** What is stored instead of a credential: the hex SHA-256 of the whole value. */
export function hashToken(value: string): string {
  // The one-shot form: a token is hashed on every v1 request, and this is a third of the cost.
  return hash('sha256', value, 'hex');
}

/** The last four characters, kept for display so users can tell their tokens apart. */
export function tokenLast4(value: string): string {
  return value.slice(-4);
}

/** Constant-time comparison of two strings of any length. */
export function safeEqual(a: string, b: string): boolean {
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}
