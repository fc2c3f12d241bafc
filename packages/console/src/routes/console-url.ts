import { isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';

/** One DNS label: letters, digits, underscores and inner hyphens, 1 to 63 characters. */
const LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/i;

const badHost = () =>
  new AppError(
    400,
    'host: expected a host name or an IP address (IPv6 in brackets), optionally followed by :port with a port from 1 to 65535',
  );

/** A host name (labels of letters, digits, underscores and hyphens, at most 253 characters) or an IPv4 literal; null otherwise. */
function hostName(name: string): string | null {
  const bare = name.endsWith('.') ? name.slice(0, -1) : name;
  if (isIP(bare) === 4) return bare;
  if (bare.length === 0 || bare.length > 253) return null;
  return bare.split('.').every((label) => LABEL.test(label)) ? bare.toLowerCase() : null;
}

/**
 * The `Host` the request came with (the forwarded host behind a trusted proxy, as the host guard
 * reads it), rebuilt from validated parts: a host name, an IPv4 literal or a bracketed IPv6
 * literal, and a port of digits from 1 to 65535. Anything else is refused (400 naming `host`):
 * this address goes into the install script and the commands an operator pastes into a root shell
 * (docs/security.md, "Install script and package").
 */
export function requestOrigin(request: FastifyRequest): string {
  const protocol = request.protocol;
  if (protocol !== 'http' && protocol !== 'https') throw badHost();
  const raw = request.host;
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:[\]]+))(?::([0-9]{1,5}))?$/i.exec(raw);
  if (!m) throw badHost();
  let host: string;
  if (m[1] !== undefined) {
    if (isIP(m[1]) !== 6) throw badHost();
    host = `[${m[1].toLowerCase()}]`;
  } else {
    const name = hostName(m[2]!);
    if (name === null) throw badHost();
    host = name;
  }
  const port = m[3] === undefined ? null : Number(m[3]);
  if (port !== null && (port < 1 || port > 65535)) throw badHost();
  return `${protocol}://${host}${port === null ? '' : `:${port}`}`;
}

/**
 * The address agents use to reach this console: PALISADE_PUBLIC_URL (the operator's), else the
 * address the browser used, validated by `requestOrigin`.
 */
export function consoleUrl(request: FastifyRequest): string {
  return request.server.config.publicUrl ?? requestOrigin(request);
}

/**
 * `text` as one single-quoted sh word: inside single quotes nothing is special but `'` itself,
 * which becomes `'\''` (close, an escaped quote, reopen).
 */
export function shQuote(text: string): string {
  return `'${text.split("'").join(`'\\''`)}'`;
}
