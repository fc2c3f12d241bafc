import { isIP } from 'node:net';
import type { ConsoleConfig } from '../config.js';

/** Names that always mean this machine: a page on another site cannot make a browser send them. */
const LOCAL_NAMES = new Set(['localhost', '127.0.0.1', '[::1]']);

function normalise(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

function isIpLiteral(hostname: string): boolean {
  return isIP(hostname.startsWith('[') ? hostname.slice(1, -1) : hostname) !== 0;
}

/**
 * Which `Host` names the console answers to (docs/security.md, "DNS rebinding"). A rebinding page
 * reaches the console under the attacker's own name, so only names the operator chose are served:
 * the public URL's host, this machine's local names, and — with no public URL set, as in
 * development — the listen name and any IP literal (a literal cannot be rebound).
 */
export function hostPolicy(config: Pick<ConsoleConfig, 'publicUrl' | 'host'>) {
  const publicHost = config.publicUrl ? normalise(new URL(config.publicUrl).hostname) : null;
  const listenHost = normalise(config.host.includes(':') ? `[${config.host}]` : config.host);
  return {
    /** What a refused request is told to use instead. */
    expected: publicHost ?? 'localhost or an IP address (set PALISADE_PUBLIC_URL to serve a name)',
    allows(hostname: string): boolean {
      const name = normalise(hostname);
      if (LOCAL_NAMES.has(name) || name === publicHost) return true;
      if (publicHost !== null) return false;
      return name === listenHost || isIpLiteral(name);
    },
  };
}
