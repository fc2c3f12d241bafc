/**
 * How an agent is addressed: its base URL and, for an agent serving TLS with its own certificate,
 * the SHA-256 fingerprint the console and the SDK pin. Used by the console's server routes, the
 * dashboard's add-server form and the SDK. No dependencies (runs in browsers too).
 */

export const AGENT_URL_EXPECTED =
  'expected an http or https URL with a host and an optional port 1-65535, e.g. http://203.0.113.7:9100';

export const FINGERPRINT_EXPECTED =
  'expected the SHA-256 fingerprint the agent prints (32 hex pairs separated by colons, or 64 hex digits)';

/**
 * The agent's base address, or null when it is not one: http or https only, a host, a port (if
 * given) of 1-65535, no user name or password, no query or fragment, at most 2048 characters.
 * Returns the address as typed (trimmed); the console stores and calls exactly that.
 */
export function parseAgentUrl(raw: string): string | null {
  const value = raw.trim();
  if (value.length === 0 || value.length > 2048 || /[\s\\]/.test(value)) return null;
  const scheme = /^(https?):\/\/([^/?#]*)/i.exec(value);
  if (!scheme) return null;
  // The port as typed: the URL parser would turn `:0` or `:00080` into something else silently.
  const authority = scheme[2]!;
  const port = /^(?:\[[^\]]*\]|[^:[\]]*)(?::(\d*))?$/.exec(authority);
  if (!port) return null;
  if (port[1] !== undefined && !/^[1-9]\d{0,4}$/.test(port[1])) return null;
  if (port[1] !== undefined && Number(port[1]) > 65535) return null;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (!url.hostname || url.username || url.password || url.search || url.hash) return null;
  return value;
}

/**
 * The canonical form of a certificate fingerprint, as `openssl x509 -fingerprint -sha256` and the
 * agent print it (`AB:CD:…`, 32 upper-case hex pairs), or null when `raw` is not a SHA-256
 * fingerprint. Accepts colon-separated pairs or 64 plain hex digits, in any case.
 */
export function normalizeFingerprint(raw: string): string | null {
  const value = raw.trim();
  let hex: string;
  if (/^[0-9a-fA-F]{2}(:[0-9a-fA-F]{2}){31}$/.test(value)) hex = value.replaceAll(':', '');
  else if (/^[0-9a-fA-F]{64}$/.test(value)) hex = value;
  else return null;
  return hex.toUpperCase().match(/../g)!.join(':');
}
