import { createHmac } from 'node:crypto';

/** `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`, the same scheme as the console's webhooks. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}
