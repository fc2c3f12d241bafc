// Log patterns (`block-pattern`): the shipped ones users enable by name, validation of custom
// ones and per-source counting in a window. Tailing the files is in file-tail.ts.
import { createRequire } from 'node:module';
import { setFlagsFromString } from 'node:v8';
import {
  type BlockPattern,
  type BlockPatternBody,
  blockPatternBody,
  checkControl,
  JOURNAL_REQUIRED,
  MAX_REGEX,
  MAX_TTL_S,
} from '@palisade/protocol/control-schemas/standalone';
import { InputError, parseAddress } from '../lib/net.js';
import { MAX_LINE } from './file-tail.js';

export type { BlockPattern };

export interface ShippedPattern extends BlockPattern {
  description: string;
}

// Written without nested repetition, so the shipped patterns pass the check custom ones get.
const IP = '(?<ip>[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}\\.[0-9]{1,3}|[0-9a-fA-F:]*:[0-9a-fA-F:.]+)';

/** Combined-format access log lines probing for what scanners look for, answered 4xx or 5xx (nginx and Apache alike). */
const HTTP_SCAN = `^${IP} \\S+ \\S+ \\[[^\\]]+\\] "[A-Z]+ [^"]*(?:wp-login\\.php|xmlrpc\\.php|/\\.env|/\\.git/|phpmyadmin|/cgi-bin/|\\.\\./|/etc/passwd|/vendor/phpunit)[^"]*" (?:4\\d\\d|5\\d\\d) `;

/** Ready patterns, enabled with `POST /block-pattern {"name": "sshd"}`; test/fixtures/logs holds a sample line for each. */
export const SHIPPED_PATTERNS: ShippedPattern[] = [
  {
    name: 'sshd',
    description: 'OpenSSH: failed passwords and keys, invalid users, pre-auth disconnects',
    file: '/var/log/auth.log',
    source: 'auto',
    journal: ['sshd', 'ssh.service', 'sshd.service'],
    regex: `sshd\\[\\d+\\]: (?:Failed (?:password|publickey|keyboard-interactive/pam) for (?:invalid user )?\\S* ?from|Invalid user \\S* ?from|(?:Connection closed by|Disconnected from) (?:authenticating|invalid) user \\S* ?|error: maximum authentication attempts exceeded for (?:invalid user )?\\S* ?from|Did not receive identification string from|Unable to negotiate with) ${IP}`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
  {
    name: 'nginx-auth',
    description: 'nginx basic auth: unknown users and wrong passwords (error.log)',
    file: '/var/log/nginx/error.log',
    source: 'auto',
    journal: ['nginx.service'],
    regex: `user "[^"]*"(?: was not found in "[^"]*"|: password mismatch), client: ${IP}`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
  {
    name: 'apache-auth',
    description: 'Apache basic auth: unknown users and wrong passwords (error.log)',
    file: '/var/log/apache2/error.log',
    source: 'auto',
    regex: `\\[client \\[?${IP}\\]?(?::\\d+|)\\] AH0(?:1617|1618|1614): (?:user \\S+(?: not found|: authentication failure)|client used wrong authentication scheme)`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
  {
    name: 'http-scan',
    description: 'nginx access log: probes for wp-login, .env, .git, phpMyAdmin, path traversal',
    file: '/var/log/nginx/access.log',
    source: 'auto',
    regex: HTTP_SCAN,
    threshold: 3,
    window_s: 300,
    ban_s: 86400,
  },
  {
    name: 'http-scan-apache',
    description: 'Apache access log: probes for wp-login, .env, .git, phpMyAdmin, path traversal',
    file: '/var/log/apache2/access.log',
    source: 'auto',
    regex: HTTP_SCAN,
    threshold: 3,
    window_s: 300,
    ban_s: 86400,
  },
  {
    name: 'postfix',
    description: 'Postfix: SASL authentication failures and rejected relaying',
    file: '/var/log/mail.log',
    source: 'auto',
    journal: ['postfix/smtpd', 'postfix/submission/smtpd', 'postfix/smtps/smtpd'],
    regex: `postfix/(?:submission/|smtps/)?smtpd\\[\\d+\\]: (?:warning: [-._\\w]+\\[${IP}\\]: SASL \\w+ authentication failed|NOQUEUE: reject: RCPT from [-._\\w]+\\[(?<ip2>[0-9a-fA-F:.]+)\\]: 5\\d\\d )`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
  {
    name: 'dovecot',
    description: 'Dovecot IMAP/POP3: failed logins',
    file: '/var/log/mail.log',
    source: 'auto',
    journal: ['dovecot'],
    regex: `dovecot(?:\\[\\d+\\]|): (?:imap|pop3|submission|managesieve)-login: (?:Disconnected|Aborted login|Login aborted)[^\\n]*?auth failed[^\\n]*? rip=${IP}`,
    threshold: 5,
    window_s: 600,
    ban_s: 3600,
  },
];

/**
 * Makes V8 finish a regex that backtracks too much (50,000 backtracks) on its linear-time engine,
 * for every regex that engine can run (no backreferences or lookaround), so one log line cannot
 * stall the daemon even with a regex the star-height check lets through.
 */
export function boundRegexBacktracking(): void {
  setFlagsFromString('--enable-experimental-regexp-engine-on-excessive-backtracks');
}

type SafeRegex = (re: string, opts?: { limit?: number }) => boolean;
let safeRegex: SafeRegex | null = null;

/**
 * Refuses regexes that can backtrack catastrophically: a quantifier inside a quantified group
 * (`(a+)+`, even `(\.\d+){3}`) or more than 25 quantifiers. safe-regex2 is loaded on first use only.
 */
function checkBacktracking(regex: string): void {
  safeRegex ??= createRequire(import.meta.url)('safe-regex2') as SafeRegex;
  if (!safeRegex(regex))
    throw new InputError(
      'regex: could backtrack catastrophically (a quantifier inside a repeated group such as (a+)+ or ' +
        '(\\.\\d+){3}, more than 25 quantifiers, or lookbehind, which the check cannot read); ' +
        'spell repetitions out, e.g. \\d{1,3}\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}',
    );
}

/** A pattern ready to match: the regex compiled once. */
export interface CompiledPattern extends BlockPattern {
  re: RegExp;
}

export function compilePattern(p: BlockPattern): CompiledPattern {
  return { ...p, re: new RegExp(p.regex) };
}

/** The source address of a matching line, or null. `ip2` is a second spelling some shipped patterns need. */
export function matchLine(p: CompiledPattern, line: string): string | null {
  const m = p.re.exec(line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line);
  if (!m?.groups) return null;
  const raw = m.groups.ip ?? m.groups.ip2;
  if (!raw) return null;
  return parseAddress(raw)?.text ?? null;
}

/** A `block-pattern` body or a saved pattern, checked with the control schema, then as a pattern. */
export function parsePatternInput(raw: unknown): BlockPattern {
  const checked = checkControl(blockPatternBody, raw);
  if (!checked.ok) throw new InputError(checked.problem);
  return patternOf(checked.value);
}

/** A checked body made whole: a shipped name fills in every field not given; the regex must compile, name `ip` and not backtrack. */
export function patternOf(o: BlockPatternBody): BlockPattern {
  const shipped = SHIPPED_PATTERNS.find((p) => p.name === o.name);
  const file = o.file ?? shipped?.file;
  if (file === undefined) throw new InputError('file: expected an absolute path to a log file');
  const regex = o.regex ?? shipped?.regex;
  if (regex === undefined)
    throw new InputError(`regex: expected a regular expression of at most ${MAX_REGEX} characters`);
  const whole = (name: 'threshold' | 'window_s' | 'ban_s', max: number) => {
    const v = o[name] ?? shipped?.[name];
    if (v === undefined) throw new InputError(`${name}: expected a whole number from 1 to ${max}`);
    return v;
  };
  try {
    new RegExp(regex);
  } catch (err) {
    throw new InputError(`regex: not a valid regular expression: ${(err as Error).message}`);
  }
  if (!regex.includes('(?<ip>')) throw new InputError('regex: needs a named group for the address: (?<ip>…)');
  checkBacktracking(regex);
  // A file given by hand means that file, unless a source is given too (docs/protection.md, "Where a pattern reads").
  const source = o.source ?? (o.file !== undefined ? 'file' : shipped?.source) ?? 'file';
  const journal = o.journal ?? shipped?.journal;
  if (source === 'journal' && !journal) throw new InputError(JOURNAL_REQUIRED);
  return {
    name: o.name,
    file,
    regex,
    threshold: whole('threshold', 100_000),
    window_s: whole('window_s', 86_400),
    ban_s: whole('ban_s', MAX_TTL_S),
    source,
    ...(journal ? { journal: [...journal] } : {}),
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
