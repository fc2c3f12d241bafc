import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { isWellFormedToken, tokenLast4 } from '../lib/tokens.js';
import { readJsonFile, writeFileAtomic } from './state-dir.js';

/** The console this agent checks in with, and its daemon token (kept in a 0600 file). */
export interface Enrolment {
  console_url: string;
  token: string;
  enrolled_at: number;
  /**
   * `outbound` when the console answered the registration that it cannot reach this agent: the
   * agent keeps its link whatever `console.connect` says (docs/agent.md, "Outbound link").
   */
  connect?: 'outbound';
  /**
   * The console's addresses when the enrolment was made (its URL's host resolved): the agent never
   * blocks them, from the moment the enrolment is stored (docs/protection.md, "Never blocked").
   */
  console_ips?: string[];
}

/** The addresses of the console URL's host: the address itself, or what DNS answers; none when it cannot be resolved. */
export async function consoleAddresses(
  consoleUrl: string,
  resolve: (host: string) => Promise<string[]> = async (host) =>
    (await lookup(host, { all: true })).map((a) => a.address),
): Promise<string[]> {
  const host = new URL(consoleUrl).hostname.replace(/^\[|\]$/g, '');
  if (isIP(host)) return [host];
  try {
    return [...new Set(await resolve(host))];
  } catch {
    return [];
  }
}

/** Checks an enrolment request; the error names the field. */
export function validateEnrolment(input: unknown): { console_url: string; token: string } {
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    throw new Error('body: expected a JSON object with console_url and token');
  }
  const { console_url, token } = input as Record<string, unknown>;
  const url = validateConsoleUrl(console_url);
  if (typeof token !== 'string' || token === '') throw new Error('token: required');
  if (!isWellFormedToken('daemon', token)) throw new Error('token: expected a daemon token (dmn_…)');
  return { console_url: url, token };
}

/** The console's address, without a trailing slash; the error names `console_url`. */
export function validateConsoleUrl(console_url: unknown): string {
  if (typeof console_url !== 'string' || console_url === '') throw new Error('console_url: required');
  let url: URL;
  try {
    url = new URL(console_url);
  } catch {
    throw new Error('console_url: expected an http:// or https:// URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username || url.password) {
    throw new Error('console_url: expected an http:// or https:// URL without credentials');
  }
  return url.toString().replace(/\/+$/, '');
}

export function saveEnrolment(file: string, enrolment: Enrolment): void {
  writeFileAtomic(file, `${JSON.stringify(enrolment)}\n`, 0o600);
}

export function readEnrolment(file: string): Enrolment | null {
  const e = readJsonFile<Enrolment>(file);
  if (!e) return null;
  validateEnrolment(e);
  if (
    e.console_ips !== undefined &&
    (!Array.isArray(e.console_ips) || e.console_ips.some((ip) => typeof ip !== 'string'))
  )
    delete e.console_ips;
  return e;
}

export function describeEnrolment(e: Enrolment): string {
  return `${e.console_url} (token …${tokenLast4(e.token)}, since ${new Date(e.enrolled_at).toISOString()})`;
}
