// Follows the systemd journal for block patterns whose source is the journal (docs/protection.md,
// "Where a pattern reads"). Loaded only when such a pattern exists (pattern-watch.ts imports it
// on first use), so an agent without one pays nothing for it.
//
// `journalctl` runs with a fixed argument list (no shell) from a fixed path, matching only the
// syslog identifiers and units the pattern names. Each entry's `__CURSOR` is kept; after the
// pattern watch has matched a poll's lines it calls `commit()`, which saves the cursor (state dir,
// 0600, atomic write), and a restarted agent or journalctl resumes after it: journalctl itself
// follows journal rotation, so no entry is lost or read twice.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { MAX_LINE } from './file-tail.js';

/** Where journalctl is looked for; never found through PATH. */
export const JOURNALCTL_PATHS = ['/usr/bin/journalctl', '/bin/journalctl'];
/** Entries waiting for a poll; journalctl is paused (its pipe fills, it blocks) beyond this. */
const MAX_QUEUE = 5000;
/** A JSON entry longer than this is skipped whole (the journal allows 48 KiB messages). */
const MAX_ENTRY = 64 * 1024;
/** After journalctl exits, it is started again no sooner than this. */
const RESTART_MS = 5000;

/** journalctl's match arguments: a name with a unit suffix is a unit, anything else an identifier; `+` ORs them. */
export function journalMatches(names: string[]): string[] {
  const out: string[] = [];
  for (const n of names) {
    if (out.length > 0) out.push('+');
    out.push(/\.(?:service|socket|scope)$/.test(n) ? `_SYSTEMD_UNIT=${n}` : `SYSLOG_IDENTIFIER=${n}`);
  }
  return out;
}

/** The text a pattern sees for one entry: `ident[pid]: message`, as syslog writes it to auth.log. */
export function entryLine(e: Record<string, unknown>): string | null {
  let msg = e.MESSAGE;
  if (Array.isArray(msg)) msg = Buffer.from(msg.filter((b) => typeof b === 'number')).toString('utf8');
  if (typeof msg !== 'string') return null;
  const ident = typeof e.SYSLOG_IDENTIFIER === 'string' ? e.SYSLOG_IDENTIFIER : '';
  const pid = typeof e.SYSLOG_PID === 'string' ? e.SYSLOG_PID : typeof e._PID === 'string' ? e._PID : '';
  // A message that already carries its tag (`systemd-cat` of a syslog line) is kept as it is.
  const line = ident && !msg.startsWith(`${ident}[`) ? `${ident}${pid ? `[${pid}]` : ''}: ${msg}` : msg;
  return line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line;
}

export interface JournalTailOptions {
  names: string[];
  /** A journal directory (`journalctl --directory`); null for the system journal. */
  directory: string | null;
  /** The cursor saved by an earlier run, or null to start at the journal's end. */
  cursor: string | null;
  saveCursor: (cursor: string) => void;
  clock: () => number;
  onError?: (message: string) => void;
  /** journalctl's path (tests); default the first of JOURNALCTL_PATHS that exists. */
  journalctl?: string;
}

interface Entry {
  line: string | null;
  cursor: string;
}

export class JournalTail {
  private child: ChildProcess | null = null;
  private queue: Entry[] = [];
  private partial = '';
  private skipping = false;
  private lastQueued: string | null;
  private delivered: string | null = null;
  private saved: string | null;
  private restartAt = 0;
  private closed = false;
  private seeked = false;
  private busy = false;
  private stderrTail = '';
  error: string | null = null;
  /** Entries handed to the pattern watch since start (tests and `info` count them). */
  entries = 0;

  constructor(private readonly o: JournalTailOptions) {
    this.lastQueued = o.cursor;
    this.saved = o.cursor;
  }

  private fail(message: string) {
    if (message !== this.error) this.o.onError?.(message);
    this.error = message;
  }

  private bin(): string | null {
    const bin = this.o.journalctl ?? JOURNALCTL_PATHS.find((p) => existsSync(p)) ?? null;
    if (!bin) {
      this.fail('journalctl not found (/usr/bin/journalctl); install systemd or give the pattern source "file"');
      this.restartAt = this.o.clock() + RESTART_MS;
    }
    return bin;
  }

  /**
   * Without a saved cursor, the cursor of the newest matching entry now (one short journalctl run),
   * so following starts at a fixed point: every entry written after the first poll returns is read.
   * With no matching entry at all, following from the journal's start reads only newer ones.
   */
  private seekEnd(bin: string): Promise<void> {
    const args = ['--output=json', '--output-fields=__CURSOR', '--no-pager', '--quiet', '--lines=1'];
    if (this.o.directory) args.push(`--directory=${this.o.directory}`);
    args.push(...journalMatches(this.o.names));
    return new Promise((resolve) => {
      const child = spawn(bin, args, { stdio: ['ignore', 'pipe', 'ignore'], env: { LANG: 'C.UTF-8' } });
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        if (out.length < MAX_ENTRY) out += c.toString('utf8');
      });
      child.on('error', () => resolve());
      child.on('close', () => {
        const m = /"__CURSOR":"([^"]{1,512})"/.exec(out);
        if (m) this.lastQueued = m[1]!;
        this.seeked = true;
        resolve();
      });
    });
  }

  private start(bin: string) {
    const args = [
      '--output=json',
      '--output-fields=MESSAGE,SYSLOG_IDENTIFIER,SYSLOG_PID,_PID',
      '--follow',
      '--no-pager',
      '--quiet',
    ];
    if (this.o.directory) args.push(`--directory=${this.o.directory}`);
    args.push(this.lastQueued ? `--after-cursor=${this.lastQueued}` : '--lines=all');
    args.push(...journalMatches(this.o.names));
    const child = spawn(bin, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { LANG: 'C.UTF-8', SYSTEMD_COLORS: '0' },
    });
    this.child = child;
    this.partial = '';
    this.skipping = false;
    this.stderrTail = '';
    child.stdout!.on('data', (chunk: Buffer) => this.take(chunk));
    child.stderr!.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString('utf8')).slice(-2000);
      const last = this.stderrTail.trim().split('\n').pop()?.trim();
      // Without the adm or systemd-journal group journalctl shows only the agent's own entries, and says so.
      if (last) this.fail(`journalctl: ${last.slice(0, 300)}`);
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      this.fail(`cannot run ${bin}: ${err.code ?? err.message}`);
    });
    child.on('close', (code, signal) => {
      if (this.child !== child) return;
      this.child = null;
      this.restartAt = this.o.clock() + RESTART_MS;
      if (this.closed) return;
      const why = this.stderrTail.trim().split('\n').pop()?.trim();
      this.fail(`journalctl exited (${signal ?? `code ${code}`})${why ? `: ${why.slice(0, 300)}` : ''}`);
    });
  }

  private take(chunk: Buffer) {
    const parts = (this.partial + chunk.toString('utf8')).split('\n');
    const rest = parts.pop() ?? '';
    for (const p of parts) {
      if (this.skipping) {
        this.skipping = false;
        continue;
      }
      if (p.length > MAX_ENTRY || p === '') continue;
      let e: Record<string, unknown>;
      try {
        e = JSON.parse(p) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (typeof e.__CURSOR !== 'string') continue;
      this.queue.push({ line: entryLine(e), cursor: e.__CURSOR });
      this.lastQueued = e.__CURSOR;
    }
    if (rest.length > MAX_ENTRY) {
      this.skipping = true;
      this.partial = '';
    } else this.partial = rest;
    if (this.queue.length >= MAX_QUEUE) this.child?.stdout?.pause();
  }

  /** The entries' lines since the last poll (journalctl is started or restarted here when needed). */
  async poll(): Promise<string[] | null> {
    if (this.closed || this.busy) return null;
    if (!this.child && this.o.clock() >= this.restartAt) {
      const bin = this.bin();
      if (bin) {
        if (!this.lastQueued && !this.seeked) {
          this.busy = true;
          try {
            await this.seekEnd(bin);
          } finally {
            this.busy = false;
          }
          if (this.closed) return null;
        }
        this.start(bin);
      }
    }
    if (this.child && this.error?.startsWith('journalctl exited')) this.error = null;
    const taken = this.queue;
    this.queue = [];
    this.child?.stdout?.resume();
    const lines: string[] = [];
    for (const e of taken) if (e.line !== null) lines.push(e.line);
    if (taken.length > 0) {
      this.delivered = taken[taken.length - 1]!.cursor;
      this.entries += taken.length;
    }
    return lines;
  }

  /** Saves the cursor of the last entry handed out, once its lines have been matched. */
  commit(): void {
    if (this.delivered && this.delivered !== this.saved) {
      this.o.saveCursor(this.delivered);
      this.saved = this.delivered;
    }
  }

  close(): void {
    this.closed = true;
    const c = this.child;
    this.child = null;
    c?.kill('SIGTERM');
  }
}
