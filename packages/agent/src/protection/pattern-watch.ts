import { type BlockPatternBody, MAX_TTL_S } from '@palisade/protocol/control-schemas/standalone';
import type { ProtectSetting } from '../config/protection-settings.js';
import { InputError } from '../lib/net.js';
import { CONTROL_CHARACTERS, NO_CONTROL_CHARACTERS } from '../lib/text.js';
import type { AttackResponse } from './attack-response.js';
import type { FeatureContext } from './context.js';
import { NotFound } from './errors.js';
import { FileTail, untailable } from './file-tail.js';
import { cachedServices, type FoundServices, patternsToProtect, SERVICE_PATTERNS, serviceOf } from './host-services.js';
import type { JournalTail } from './journal-tail.js';
import {
  type BlockPattern,
  type CompiledPattern,
  compilePattern,
  HitCounter,
  matchLine,
  parsePatternInput,
  patternOf,
  SHIPPED_PATTERNS,
} from './log-patterns.js';
import { type LogHost, REAL_LOG_HOST, type ResolvedSource, resolveSource } from './log-sources.js';
import { acceptedFrom } from './ssh-sessions.js';
import type { StateFile } from './store.js';

type Tail = FileTail | JournalTail;
/** What a saved cursor may look like (`s=…;i=…;b=…;m=…;t=…;x=…`); anything else is ignored. */
const CURSOR = /^[A-Za-z0-9=;_-]{1,512}$/;

interface PatternState {
  pattern: CompiledPattern;
  source: ResolvedSource;
  counter: HitCounter;
  matches: number;
  bans: number;
}

/**
 * Block patterns (patterns.json): each tails its log file, and an address that matches
 * `threshold` times within `window_s` is reported as a `log_pattern` attack and banned.
 */
export class PatternWatch {
  private file: StateFile<BlockPattern[]>;
  private patterns = new Map<string, PatternState>();
  private tails = new Map<string, Tail>();
  private sources = new Map<string, ResolvedSource>();
  private stopped = false;
  private cursors: StateFile<Record<string, string>>;
  private journalModule: typeof import('./journal-tail.js') | null = null;
  private journalLoading = false;
  private readonly host: LogHost;
  /** The services the shipped patterns protect found on this host, looked at again at most every 10 s. */
  readonly services: () => FoundServices;
  /** Which `protection.protect` value was applied last (protect.json): applied again only when it changes. */
  private protectApplied: StateFile<{ applied: string }>;

  constructor(
    private readonly ctx: FeatureContext,
    private readonly response: AttackResponse,
    /** Told of each SSH log-in a source's lines show (ssh-sessions.ts), so its peer is never banned. */
    private readonly onLogIn: (ip: string) => void = () => {},
  ) {
    this.file = ctx.store.json<BlockPattern[]>('patterns.json', []);
    this.cursors = ctx.store.json<Record<string, string>>('journal-cursors.json', {});
    this.host = ctx.deps.logs ?? REAL_LOG_HOST;
    this.services = cachedServices(this.host, () => ctx.deps.clock());
    this.protectApplied = ctx.store.json<{ applied: string }>('protect.json', { applied: '' });
    for (const p of this.file.read()) {
      try {
        // An older agent allowed a ten-year ban_s, which nftables refuses: shortened, not dropped.
        if (p && typeof p.ban_s === 'number' && p.ban_s > MAX_TTL_S) {
          ctx.log(
            'warn',
            `protection: pattern ${JSON.stringify(p.name)} had ban_s ${p.ban_s}; shortened to ${MAX_TTL_S}`,
          );
          p.ban_s = MAX_TTL_S;
        }
        this.install(parsePatternInput(p));
      } catch (err) {
        // The name is quoted: a hand-edited file must not forge log lines.
        ctx.log('warn', `protection: pattern ${JSON.stringify(p?.name)} not loaded: ${(err as Error).message}`);
      }
    }
  }

  get size(): number {
    return this.patterns.size;
  }

  private bySource(): Map<string, PatternState[]> {
    const by = new Map<string, PatternState[]>();
    for (const p of this.patterns.values()) {
      const list = by.get(p.source.key) ?? [];
      list.push(p);
      by.set(p.source.key, list);
      this.sources.set(p.source.key, p.source);
    }
    return by;
  }

  /**
   * Starts a poll of each pattern source without waiting for it: a file on a stalled file system
   * holds up only its own tail (the next poll is skipped while one runs), never the detection loop.
   */
  check(): void {
    const by = this.bySource();
    for (const key of by.keys()) {
      const tail = this.tailOf(key);
      if (!tail) continue;
      tail.poll().then(
        (lines) => {
          if (lines && lines.length > 0 && !this.stopped) this.match(key, lines);
          if ('commit' in tail && !this.stopped) this.commit(tail);
        },
        (err: Error) =>
          this.ctx.log('warn', `protection: reading ${this.sources.get(key)?.label} failed: ${err.message}`),
      );
    }
    for (const [key, tail] of this.tails) {
      if (!by.has(key)) {
        tail.close();
        this.tails.delete(key);
      }
    }
  }

  private commit(tail: JournalTail) {
    try {
      tail.commit();
    } catch (err) {
      this.ctx.log('warn', `protection: saving the journal cursor failed: ${(err as Error).message}`);
    }
  }

  /** The tail of a source; a journal tail once its module has loaded (null until then). */
  private tailOf(key: string): Tail | null {
    let tail = this.tails.get(key);
    if (tail) return tail;
    const source = this.sources.get(key);
    if (!source) return null;
    const onError = (message: string) => this.ctx.log('warn', `protection: block pattern source skipped: ${message}`);
    if (source.kind === 'file') tail = new FileTail(source.path, onError);
    else {
      const mod = this.journalModule;
      if (!mod) {
        this.loadJournal();
        return null;
      }
      const saved = this.savedCursor(key);
      tail = new mod.JournalTail({
        names: source.names,
        directory: this.host.journalDirectory,
        cursor: saved,
        clock: () => this.ctx.deps.clock(),
        onError,
        saveCursor: (cursor) => {
          const all = this.readCursors();
          all[key] = cursor;
          this.cursors.write(all);
        },
      });
    }
    this.tails.set(key, tail);
    return tail;
  }

  private loadJournal() {
    if (this.journalLoading) return;
    this.journalLoading = true;
    import('./journal-tail.js').then(
      (mod) => {
        this.journalModule = mod;
      },
      (err: Error) => this.ctx.log('warn', `protection: journal reader not loaded: ${err.message}`),
    );
  }

  private readCursors(): Record<string, string> {
    try {
      const all = this.cursors.read();
      return all && typeof all === 'object' && !Array.isArray(all) ? all : {};
    } catch (err) {
      this.ctx.log('warn', `protection: journal cursors not read: ${(err as Error).message}`);
      return {};
    }
  }

  private savedCursor(key: string): string | null {
    const c = this.readCursors()[key];
    return typeof c === 'string' && CURSOR.test(c) ? c : null;
  }

  /** Resolves once every journal source has its tail (the module is loaded and journalctl started). */
  async ready(): Promise<void> {
    if (![...this.patterns.values()].some((p) => p.source.kind === 'journal')) return;
    this.journalModule ??= await import('./journal-tail.js');
  }

  private match(key: string, lines: string[]) {
    const now = this.ctx.deps.clock();
    const states = this.bySource().get(key) ?? [];
    for (const line of lines) {
      const loggedIn = acceptedFrom(line);
      if (loggedIn) this.onLogIn(loggedIn);
      for (const s of states) {
        const ip = matchLine(s.pattern, line);
        if (!ip) continue;
        s.matches++;
        if (s.counter.hit(ip, now, s.pattern.window_s * 1000, s.pattern.threshold)) {
          s.bans++;
          this.response.report({
            key: `log:${s.pattern.name}`,
            kind: 'log_pattern',
            now,
            sources: [{ ip, hits: s.pattern.threshold }],
            target: s.pattern.name,
            banS: s.pattern.ban_s,
          });
        }
      }
    }
  }

  /** Closes the tails; matches that arrive afterwards are dropped. */
  stop(): void {
    this.stopped = true;
    for (const t of this.tails.values()) t.close();
  }

  list() {
    const found = this.services();
    return {
      patterns: [...this.patterns.values()].map((s) => ({
        name: s.pattern.name,
        file: s.pattern.file,
        regex: s.pattern.regex,
        threshold: s.pattern.threshold,
        window_s: s.pattern.window_s,
        ban_s: s.pattern.ban_s,
        matches: s.matches,
        bans: s.bans,
        source: s.pattern.source ?? 'file',
        ...(s.pattern.journal ? { journal: s.pattern.journal } : {}),
        reads: s.source.label,
        file_error: this.tails.get(s.source.key)?.error ?? null,
        source_error: this.tails.get(s.source.key)?.error ?? null,
      })),
      shipped: SHIPPED_PATTERNS.map(({ name, description, file, threshold, window_s, ban_s, source, journal }) => {
        const service = serviceOf(name);
        return {
          name,
          description,
          file,
          threshold,
          window_s,
          ban_s,
          source,
          ...(journal ? { journal } : {}),
          found: service ? found[service] : null,
        };
      }),
      services: Object.entries(SERVICE_PATTERNS).map(([service, patterns]) => ({
        service,
        patterns,
        found: found[service as keyof FoundServices],
        enabled: patterns.every((p) => this.patterns.has(p)),
      })),
    };
  }

  /**
   * Enables the shipped patterns of the services `protection.protect` names (or, for `auto`, those
   * found here) that are not enabled yet — once per value: protect.json keeps the value applied, so
   * a pattern removed later stays removed until the value changes (docs/protection.md).
   */
  async applyProtect(setting: ProtectSetting): Promise<string[]> {
    const value = setting === null ? '' : setting === 'auto' ? 'auto' : setting.join(',');
    let applied = '';
    try {
      applied = String(this.protectApplied.read()?.applied ?? '');
    } catch (err) {
      this.ctx.log('warn', `protection: protect.json not read: ${(err as Error).message}`);
    }
    if (value === applied) return [];
    const enabled: string[] = [];
    for (const name of patternsToProtect(setting, this.services())) {
      if (this.patterns.has(name)) continue;
      try {
        await this.add({ name });
        enabled.push(name);
      } catch (err) {
        this.ctx.log('warn', `protection.protect: pattern ${name} not enabled: ${(err as Error).message}`);
      }
    }
    this.protectApplied.write({ applied: value });
    if (value !== '')
      this.ctx.log(
        'info',
        `protection.protect = ${value}: ${enabled.length > 0 ? `enabled the block patterns ${enabled.join(', ')}` : 'every pattern it names was enabled already'}`,
      );
    return enabled;
  }

  private install(p: BlockPattern) {
    const source = resolveSource(p, this.host);
    this.sources.set(source.key, source);
    this.patterns.set(p.name, { pattern: compilePattern(p), source, counter: new HitCounter(), matches: 0, bans: 0 });
  }

  private save() {
    this.file.write([...this.patterns.values()].map(({ pattern: { re: _re, ...p } }) => p));
  }

  async add(body: BlockPatternBody) {
    const p = patternOf(body);
    const source = resolveSource(p, this.host);
    if (source.kind === 'file') {
      const why = await untailable(source.path);
      if (why) throw new InputError(`file: ${why}`);
    }
    const existed = this.patterns.has(p.name);
    this.install(p);
    this.save();
    // Follow a new source from its end now, not at the detection loop's next tick: every line written
    // after this answer is matched, however busy the host is.
    if (!this.tails.has(source.key)) {
      if (source.kind === 'journal') await this.ready();
      const tail = this.tailOf(source.key);
      const lines = await tail?.poll();
      if (lines && lines.length > 0 && !this.stopped) this.match(source.key, lines);
    }
    return { added: !existed, pattern: p };
  }

  remove(name: string) {
    // The name is echoed in the answer: control characters are refused, not written back (docs/security.md).
    if (CONTROL_CHARACTERS.test(name)) throw new InputError(`name: ${NO_CONTROL_CHARACTERS}`);
    if (!this.patterns.has(name)) throw new NotFound(`no block pattern named "${name.slice(0, 64)}"`);
    this.patterns.delete(name);
    this.save();
    return { removed: name };
  }
}
