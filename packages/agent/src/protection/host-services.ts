// Which services the shipped log patterns protect are on this host (docs/protection.md, "Services
// found on the host"). Only fixed paths are looked at: the services' programs and systemd units;
// nothing read from a log, a config file or a request decides where to look.
import { statSync } from 'node:fs';
import { PROTECTED_SERVICES, type ProtectedService } from '@palisade/protocol/control-schemas/standalone';
import type { ProtectSetting } from '../config/protection-settings.js';
import { hostPath, type LogHost } from './log-sources.js';

/** The shipped patterns (log-patterns.ts) that protect each service. */
export const SERVICE_PATTERNS: Record<ProtectedService, string[]> = {
  sshd: ['sshd'],
  nginx: ['nginx-auth', 'http-scan'],
  apache: ['apache-auth', 'http-scan-apache'],
  postfix: ['postfix'],
  dovecot: ['dovecot'],
};

const UNIT_DIRS = ['/etc/systemd/system', '/usr/lib/systemd/system', '/lib/systemd/system'];
const units = (...names: string[]) => names.flatMap((n) => UNIT_DIRS.map((d) => `${d}/${n}`));

/**
 * What shows a service is installed, in the order looked at: its program (a package's, or one
 * built into /usr/local), then its systemd unit. Not its /etc directory or config file: a package
 * removed but not purged leaves those, and other packages drop files into /etc/apache2 (Debian's
 * javascript-common does).
 */
const programs = (...names: string[]) => names.flatMap((n) => [`/usr/sbin/${n}`, `/usr/local/sbin/${n}`]);
const EVIDENCE: Record<ProtectedService, string[]> = {
  sshd: [...programs('sshd'), ...units('ssh.service', 'sshd.service')],
  nginx: [...programs('nginx'), ...units('nginx.service')],
  apache: [...programs('apache2', 'httpd'), ...units('apache2.service', 'httpd.service')],
  postfix: [...programs('postfix'), ...units('postfix.service')],
  dovecot: [...programs('dovecot'), ...units('dovecot.service')],
};

/** A regular file (a unit masked with a link to /dev/null is not one). */
function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** Each service and the first path that shows it is here (as the host names it), or null. */
export type FoundServices = Record<ProtectedService, string | null>;

/** Looks at a few fixed paths under the host's root (log-sources.ts `LogHost`: a fixture tree in tests). */
export function findServices(host: LogHost): FoundServices {
  const found = {} as FoundServices;
  for (const service of PROTECTED_SERVICES)
    found[service] = EVIDENCE[service].find((f) => isFile(hostPath(host, f))) ?? null;
  return found;
}

/** The service a shipped pattern protects, or null for a custom pattern. */
export function serviceOf(pattern: string): ProtectedService | null {
  return PROTECTED_SERVICES.find((s) => SERVICE_PATTERNS[s].includes(pattern)) ?? null;
}

/** How long a look at the host is reused: GET /block-pattern asked often costs a few stats at most every 10 s. */
const FRESH_MS = 10_000;

/** findServices, looked at again only when the last look is older than 10 s. */
export function cachedServices(host: LogHost, clock: () => number): () => FoundServices {
  let last: { at: number; found: FoundServices } | null = null;
  return () => {
    const now = clock();
    if (!last || now - last.at >= FRESH_MS || now < last.at) last = { at: now, found: findServices(host) };
    return last.found;
  };
}

/** The shipped patterns `protection.protect` enables on this host: each named (or, for `auto`, found) service's. */
export function patternsToProtect(setting: ProtectSetting, found: FoundServices): string[] {
  if (setting === null) return [];
  const services = setting === 'auto' ? PROTECTED_SERVICES.filter((s) => found[s] !== null) : setting;
  return [...new Set(services.flatMap((s) => SERVICE_PATTERNS[s]))];
}
