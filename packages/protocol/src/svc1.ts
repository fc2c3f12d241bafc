import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** SVC1 request signing (docs/signing.md). No dependency beyond node:crypto. */
export const SVC1_VERSION = '1';
export const SVC1_WINDOW_S = 300;
export const SVC1_HEADERS = {
  key: 'x-svc-key',
  timestamp: 'x-svc-timestamp',
  version: 'x-svc-signature-version',
  signature: 'x-svc-signature',
  nonce: 'x-svc-nonce',
} as const;

export type Svc1Reason = 'missing' | 'bad_version' | 'stale' | 'future' | 'bad_signature' | 'replay';

/** Lower-case hex SHA-256 of the exact body bytes; an empty body hashes as the empty string. */
export function svc1BodyHash(body: Uint8Array | string = ''): string {
  return createHash('sha256').update(body).digest('hex');
}

/** The four payload lines joined by "\n", without a trailing newline. */
export function svc1Payload(timestamp: string, method: string, path: string, bodyHash: string): string {
  return [timestamp, method.toUpperCase(), path.split('?')[0], bodyHash].join('\n');
}

/** Lower-case hex HMAC-SHA256 of the payload, the API key itself being the secret. */
export function svc1Signature(key: string, payload: string): string {
  return createHmac('sha256', key).update(payload).digest('hex');
}

export interface SignInput {
  key: string;
  method: string;
  /** The request path; a query string is ignored (it is not signed). */
  path: string;
  /** The exact bytes that will be sent. */
  body?: Uint8Array | string;
  /** Unix seconds; defaults to now. */
  timestamp?: number;
  /** Defaults to 16 random bytes in hex. */
  nonce?: string;
}

/** The five SVC1 headers for a request whose body is exactly `body`. */
/** True when any SVC1 header is present (a route that takes no signed requests refuses them). */
export function hasSvc1Headers(headers: Record<string, string | string[] | undefined>): boolean {
  return Object.values(SVC1_HEADERS).some((name) => headers[name] !== undefined);
}

export function signRequest(input: SignInput): Record<string, string> {
  const timestamp = String(input.timestamp ?? Math.floor(Date.now() / 1000));
  const payload = svc1Payload(timestamp, input.method, input.path, svc1BodyHash(input.body ?? ''));
  return {
    [SVC1_HEADERS.key]: input.key,
    [SVC1_HEADERS.timestamp]: timestamp,
    [SVC1_HEADERS.version]: SVC1_VERSION,
    [SVC1_HEADERS.signature]: svc1Signature(input.key, payload),
    [SVC1_HEADERS.nonce]: input.nonce ?? randomBytes(16).toString('hex'),
  };
}

export interface VerifyInput {
  key: string;
  signature: string;
  timestamp: string;
  method: string;
  path: string;
  /** The exact bytes received. */
  body?: Uint8Array | string;
}

/**
 * True when `signature` is the SVC1 signature of this request, compared in constant time. For an
 * empty body an empty fourth line is accepted too. Checking headers, the clock window and replays
 * is the caller's part (the console does it in the order docs/signing.md, "Failures", gives).
 */
export function verifySignature(input: VerifyInput): boolean {
  const empty = input.body === undefined || input.body.length === 0;
  const candidates = [svc1Payload(input.timestamp, input.method, input.path, svc1BodyHash(input.body ?? ''))];
  if (empty) candidates.push(svc1Payload(input.timestamp, input.method, input.path, ''));
  const given = Buffer.from(input.signature, 'utf8');
  let ok = false;
  for (const payload of candidates) {
    const expected = Buffer.from(svc1Signature(input.key, payload), 'utf8');
    // Compare every candidate, equal lengths only, so timing does not depend on where they differ.
    if (given.length === expected.length && timingSafeEqual(given, expected)) ok = true;
  }
  return ok;
}
