// Log patterns (`block-pattern`): the shipped ones users enable by name, validation of custom
// ones, per-source counting in a window, and tailing files across rotation and truncation.
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { InputError, parseAddress } from './net.js';

export interface BlockPattern {
  name: string;
  file: string;
  regex: string;
  threshold: number;
  window_s: number;
  ban_s: number;
}

export interface ShippedPattern extends BlockPattern {
  description: string;
}

const IP = '(?<ip>[0-9]{1,3}(?:\\.[0-9]{1,3}){3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]+)';

/** Ready patterns, enabled with `POST /block-pattern {"name": "sshd"}`; test/fixtures/logs holds a sample line for each. */
export const SHIPPED_PATTERNS: ShippedPattern[] = [
  {
    name: 'sshd',
    description: 'OpenSSH: failed passwords and keys, invalid users, pre-auth disconnects',
    file: '/var/log/auth.log',
    regex: `sshd\\[\\d+\\]: (?:Failed (?:password|publickey|keyboard-interactive/pam) for (?:invalid user )?\\S* ?from|Invalid user \\S* ?from|(?:Connection closed by|Disconnected from) (?:authenticating|invalid) user \\S* ?|error: maximum authentication attempts exceeded for (?:invalid user )?\\S* ?from|Did not receive identification string from|Unable to negotiate with) ${IP}`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
  {
    name: 'nginx-auth',
    description: 'nginx basic auth: unknown users and wrong passwords (error.log)',
    file: '/var/log/nginx/error.log',
    regex: `user "[^"]*"(?: was not found in "[^"]*"|: password mismatch), client: ${IP}`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
  {
    name: 'apache-auth',
    description: 'Apache basic auth: unknown users and wrong passwords (error.log)',
    file: '/var/log/apache2/error.log',
    regex: `\\[client \\[?${IP}\\]?(?::\\d+)?\\] AH0(?:1617|1618|1614): (?:user \\S+(?: not found|: authentication failure)|client used wrong authentication scheme)`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
  {
    name: 'http-scan',
    description: 'nginx or Apache access log: probes for wp-login, .env, .git, phpMyAdmin, path traversal',
    file: '/var/log/nginx/access.log',
    regex: `^${IP} \\S+ \\S+ \\[[^\\]]+\\] "[A-Z]+ [^"]*(?:wp-login\\.php|xmlrpc\\.php|/\\.env|/\\.git/|phpmyadmin|/cgi-bin/|\\.\\./|/etc/passwd|/vendor/phpunit)[^"]*" (?:4\\d\\d|5\\d\\d) `,
    threshold: 3,
    window_s: 300,
    ban_s: 86400,
  },
  {
    name: 'postfix',
    description: 'Postfix: SASL authentication failures and rejected relaying',
    file: '/var/log/mail.log',
    regex: `postfix/(?:submission/|smtps/)?smtpd\\[\\d+\\]: (?:warning: [-._\\w]+\\[${IP}\\]: SASL \\w+ authentication failed|NOQUEUE: reject: RCPT from [-._\\w]+\\[(?<ip2>[0-9a-fA-F:.]+)\\]: 5\\d\\d )`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
  {
    name: 'dovecot',
    description: 'Dovecot IMAP/POP3: failed logins',
    file: '/var/log/mail.log',
    regex: `dovecot(?:\\[\\d+\\])?: (?:imap|pop3|submission|managesieve)-login: (?:Disconnected|Aborted login|Login aborted)[^\\n]*?auth failed[^\\n]*? rip=${IP}`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
];

const MAX_REGEX = 2000;

/** A pattern ready to match: the regex compiled once. */
export interface CompiledPattern extends BlockPattern {
  re: RegExp;
}

export function compilePattern(p: BlockPattern): CompiledPattern {
  return { ...p, re: new RegExp(p.regex) };
}

/** The source address of a matching line, or null. `ip2` is a second spelling some shipped patterns need. */
export function matchLine(p: CompiledPattern, line: string): string | null {
  const m = p.re.exec(line);
  if (!m?.groups) return null;
  const raw = m.groups.ip ?? m.groups.ip2;
  if (!raw) return null;
  return parseAddress(raw)?.text ?? null;
}

function wholeField(o: Record<string, unknown>, name: string, min: number, max: number, fallback?: number): number {
  const v = o[name] ?? fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
    throw new InputError(`${name}: expected a whole number from ${min} to ${max}`);
  return v;
}

/** Validates a `block-pattern` body; a shipped name fills in every field not given. */
export function parsePatternInput(raw: unknown): BlockPattern {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw))
    throw new InputError('body: expected {name, file, regex, threshold, window_s, ban_s}');
  const o = raw as Record<string, unknown>;
  if (typeof o.name !== 'string' || !/^[A-Za-z0-9_.-]{1,64}$/.test(o.name))
    throw new InputError('name: expected 1 to 64 letters, digits, ".", "_" or "-"');
  const shipped = SHIPPED_PATTERNS.find((p) => p.name === o.name);
  const file = o.file ?? shipped?.file;
  if (typeof file !== 'string' || !file.startsWith('/') || file.length > 500 || file.includes('\0'))
    throw new InputError('file: expected an absolute path to a log file');
  const regex = o.regex ?? shipped?.regex;
  if (typeof regex !== 'string' || regex === '' || regex.length > MAX_REGEX)
    throw new InputError(`regex: expected a regular expression of at most ${MAX_REGEX} characters`);
  try {
    new RegExp(regex);
  } catch (err) {
    throw new InputError(`regex: not a valid regular expression: ${(err as Error).message}`);
  }
  if (!regex.includes('(?<ip>')) throw new InputError('regex: needs a named group for the address: (?<ip>…)');
  return {
    name: o.name,
    file,
    regex,
    threshold: wholeField(o, 'threshold', 1, 100_000, shipped?.threshold),
    window_s: wholeField(o, 'window_s', 1, 86_400, shipped?.window_s),
    ban_s: wholeField(o, 'ban_s', 1, 10 * 365 * 86400, shipped?.ban_s),
  };
}

/** Hits per source inside a sliding window; answers true once a source reaches the threshold (and forgets it). */
export class HitCounter {
  private hits = new Map<string, number[]>();

  constructor(private readonly maxSources = 20_000) {}

  hit(ip: string, now: number, windowMs: number, threshold: number): boolean {
    let list = this.hits.get(ip);
    if (!list) {
      if (this.hits.size >= this.maxSources) {
        const oldest = this.hits.keys().next().value;
        if (oldest !== undefined) this.hits.delete(oldest);
      }
      list = [];
      this.hits.set(ip, list);
    }
    while (list.length > 0 && list[0]! <= now - windowMs) list.shift();
    list.push(now);
    if (list.length >= threshold) {
      this.hits.delete(ip);
      return true;
    }
    return false;
  }

  prune(now: number, windowMs: number): void {
    for (const [ip, list] of this.hits) if (list[list.length - 1]! <= now - windowMs) this.hits.delete(ip);
  }
}

const MAX_READ = 1 << 20;

/**
 * Follows one log file by polling: new lines since the last poll, across rotation (a new inode:
 * the rest of the old file is read first) and truncation (the size shrank: read from the start).
 * A file present at the first poll is read from its end; one that appears later, from its start.
 */
export class FileTail {
  private fd: number | null = null;
  private ino = 0;
  private pos = 0;
  private partial = '';
  private first = true;
  error: string | null = null;

  constructor(readonly path: string) {}

  poll(): string[] {
    const lines: string[] = [];
    let st: ReturnType<typeof statSync> | null = null;
    try {
      st = statSync(this.path);
      this.error = null;
    } catch (err) {
      this.error = `cannot read ${this.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
    }
    if (this.fd !== null && (!st || st.ino !== this.ino)) {
      this.drain(lines);
      closeSync(this.fd);
      this.fd = null;
    }
    if (!st) {
      this.first = false;
      return lines;
    }
    if (this.fd === null) {
      try {
        this.fd = openSync(this.path, 'r');
      } catch (err) {
        this.error = `cannot open ${this.path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
        return lines;
      }
      this.ino = st.ino;
      this.pos = this.first ? st.size : 0;
      this.partial = '';
    }
    this.first = false;
    this.drain(lines);
    return lines;
  }

  private drain(lines: string[]) {
    if (this.fd === null) return;
    const size = fstatSync(this.fd).size;
    if (size < this.pos) {
      this.pos = 0;
      this.partial = '';
    }
    let budget = MAX_READ;
    while (this.pos < size && budget > 0) {
      const buf = Buffer.allocUnsafe(Math.min(64 * 1024, size - this.pos, budget));
      const n = readSync(this.fd, buf, 0, buf.length, this.pos);
      if (n <= 0) break;
      this.pos += n;
      budget -= n;
      const text = this.partial + buf.toString('utf8', 0, n);
      const parts = text.split('\n');
      this.partial = parts.pop() ?? '';
      for (const p of parts) if (p !== '') lines.push(p);
    }
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
