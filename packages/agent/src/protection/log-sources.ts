// Where a block pattern reads (docs/protection.md, "Where a pattern reads"): its file, the systemd
// journal, or for `source: auto` whichever of those this host has.
import { accessSync, constants, lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readStateFile } from '../state/state-dir.js';
import { type BlockPattern, parsePatternInput, SHIPPED_PATTERNS } from './log-patterns.js';

/** The host's log layout; tests point `root` at a fixture tree and `journalDirectory` at journal files. */
export interface LogHost {
  /** Log file paths are looked up under this directory (normally `/`). */
  root: string;
  /** A journal directory for `journalctl --directory`; null reads the system journal. */
  journalDirectory: string | null;
}

export const REAL_LOG_HOST: LogHost = { root: '/', journalDirectory: null };

export type ResolvedSource =
  | { kind: 'file'; path: string; key: string; label: string }
  | { kind: 'journal'; names: string[]; key: string; label: string };

/**
 * Other places distributions write the same log: RHEL-style hosts use /var/log/secure and
 * /var/log/maillog, and Apache (httpd) logs to /var/log/httpd/error_log and access_log there.
 */
const ALTERNATES: Record<string, string[]> = {
  '/var/log/auth.log': ['/var/log/secure'],
  '/var/log/mail.log': ['/var/log/maillog'],
  '/var/log/apache2/error.log': ['/var/log/httpd/error_log'],
  '/var/log/apache2/access.log': ['/var/log/httpd/access_log'],
};

export function hostPath(host: LogHost, path: string): string {
  return host.root === '/' ? path : join(host.root, path);
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function canRead(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** Whether this host has a journal to read: a journal directory with something in it. */
export function hasJournal(host: LogHost): boolean {
  const dirs = host.journalDirectory
    ? [host.journalDirectory]
    : [hostPath(host, '/run/log/journal'), hostPath(host, '/var/log/journal')];
  for (const d of dirs) {
    try {
      if (lstatSync(d).isDirectory() && readdirSync(d).length > 0) return true;
    } catch {}
  }
  return false;
}

const fileSource = (host: LogHost, path: string): ResolvedSource => {
  const real = hostPath(host, path);
  return { kind: 'file', path: real, key: `file:${real}`, label: path };
};

const journalSource = (names: string[]): ResolvedSource => ({
  kind: 'journal',
  names,
  key: `journal:${names.join(',')}`,
  label: `journal: ${names.join(', ')}`,
});

/**
 * The source a pattern reads on this host. `auto`: the pattern's file or a distribution's other
 * name for it (/var/log/secure for /var/log/auth.log), the first that exists as a regular file this
 * process can read; else the journal when the host has one and the pattern names journal
 * identifiers; else a file that exists but cannot be read (its error is shown), else the pattern's
 * file (read from its start when it appears). Resolved when the pattern is loaded: at start and on
 * `POST /block-pattern`.
 */
export function resolveSource(p: BlockPattern, host: LogHost): ResolvedSource {
  const source = p.source ?? 'file';
  const names = p.journal ?? [];
  if (source === 'journal' && names.length > 0) return journalSource(names);
  if (source === 'auto') {
    const files = [p.file, ...(ALTERNATES[p.file] ?? [])].filter((f) => isFile(hostPath(host, f)));
    // A file this process can read first; RHEL keeps /var/log/secure root-only, so there the journal wins.
    const readable = files.find((f) => canRead(hostPath(host, f)));
    if (readable) return fileSource(host, readable);
    if (names.length > 0 && hasJournal(host)) return journalSource(names);
    if (files[0]) return fileSource(host, files[0]);
  }
  return fileSource(host, p.file);
}

/** Why the agent cannot read a resolved source now, or null (used by `palisade-agent info`). */
export function unreadable(s: ResolvedSource, host: LogHost): string | null {
  if (s.kind === 'file') {
    try {
      accessSync(s.path, constants.R_OK);
      return null;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return code === 'ENOENT' ? `${s.label} does not exist (yet)` : `cannot read ${s.label}: ${code}`;
    }
  }
  if (!hasJournal(host)) return 'this host has no journal files (/run/log/journal, /var/log/journal)';
  return null;
}

/** What `palisade-agent info` says of one pattern: the source it reads here and whether it can. */
export interface PatternSourceRow {
  name: string;
  enabled: boolean;
  source: 'auto' | 'file' | 'journal';
  reads: string;
  problem: string | null;
}

/** patterns.json is written by the agent's user; a larger one is not read by `info` (run as root). */
const MAX_PATTERNS_FILE = 1 << 20;

/**
 * The source of every enabled pattern (from `<state dir>/protection/patterns.json`, read without
 * following a link, size-capped, each entry validated) and of every shipped one not enabled, as
 * resolved on this host by this process.
 */
export function patternSources(
  stateDir: string,
  host: LogHost = REAL_LOG_HOST,
): { rows: PatternSourceRow[]; error: string | null } {
  const rows: PatternSourceRow[] = [];
  let error: string | null = null;
  let saved: unknown[] = [];
  const path = join(stateDir, 'protection', 'patterns.json');
  try {
    const st = lstatSync(path);
    if (!st.isFile()) throw new Error(`${path} is not a regular file`);
    if (st.size > MAX_PATTERNS_FILE) throw new Error(`${path} is larger than 1 MiB`);
    const parsed = JSON.parse(readStateFile(path)) as unknown;
    if (!Array.isArray(parsed)) throw new Error(`${path} is not a list of patterns`);
    saved = parsed.slice(0, 1000);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') error = (err as Error).message;
  }
  const row = (p: BlockPattern, enabled: boolean) => {
    const s = resolveSource(p, host);
    rows.push({ name: p.name, enabled, source: p.source ?? 'file', reads: s.label, problem: unreadable(s, host) });
  };
  for (const raw of saved) {
    try {
      row(parsePatternInput(raw), true);
    } catch {
      // Shown as the daemon shows it: a pattern it does not load is not listed.
    }
  }
  for (const p of SHIPPED_PATTERNS) if (!rows.some((r) => r.name === p.name)) row(p, false);
  return { rows, error };
}
