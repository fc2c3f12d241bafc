import { createHmac } from 'node:crypto';

/**
 * `X-Palisade-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` (docs/signing.md):
 * the agent's attack webhook and the console's account notifications sign alike, and the receiver
 * recomputes it with its secret. Only node:crypto, so the agent loads nothing else with it.
 */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}
