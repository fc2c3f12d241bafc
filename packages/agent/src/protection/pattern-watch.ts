import { type BlockPatternBody, MAX_TTL_S } from '@palisade/protocol/control-schemas/standalone';
import { InputError } from '../lib/net.js';
import { CONTROL_CHARACTERS, NO_CONTROL_CHARACTERS } from '../lib/text.js';
import type { AttackResponse } from './attack-response.js';
import type { FeatureContext } from './context.js';
import { NotFound } from './errors.js';
import { FileTail, untailable } from './file-tail.js';
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
import type { StateFile } from './store.js';

interface PatternState {
  pattern: CompiledPattern;
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
  private tails = new Map<string, FileTail>();
  private stopped = false;

  constructor(
    private readonly ctx: FeatureContext,
    private readonly response: AttackResponse,
  ) {
    this.file = ctx.store.json<BlockPattern[]>('patterns.json', []);
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

  private byFile(): Map<string, PatternState[]> {
    const byFile = new Map<string, PatternState[]>();
    for (const p of this.patterns.values()) {
      const list = byFile.get(p.pattern.file) ?? [];
      list.push(p);
      byFile.set(p.pattern.file, list);
    }
    return byFile;
  }

  /**
   * Starts a poll of each pattern file without waiting for it: a file on a stalled file system
   * holds up only its own tail (the next poll is skipped while one runs), never the detection loop.
   */
  check(): void {
    const byFile = this.byFile();
    for (const file of byFile.keys()) {
      this.tailOf(file)
        .poll()
        .then(
          (lines) => {
            if (lines && lines.length > 0 && !this.stopped) this.match(file, lines);
          },
          (err: Error) => this.ctx.log('warn', `protection: reading ${file} failed: ${err.message}`),
        );
    }
    for (const [file, tail] of this.tails) {
      if (!byFile.has(file)) {
        tail.close();
        this.tails.delete(file);
      }
    }
  }

  private tailOf(file: string): FileTail {
    let tail = this.tails.get(file);
    if (!tail) {
      tail = new FileTail(file, (message) =>
        this.ctx.log('warn', `protection: block pattern file skipped: ${message}`),
      );
      this.tails.set(file, tail);
    }
    return tail;
  }

  private match(file: string, lines: string[]) {
    const now = this.ctx.deps.clock();
    const states = this.byFile().get(file) ?? [];
    for (const line of lines) {
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
        file_error: this.tails.get(s.pattern.file)?.error ?? null,
      })),
      shipped: SHIPPED_PATTERNS.map(({ name, description, file, threshold, window_s, ban_s }) => ({
        name,
        description,
        file,
        threshold,
        window_s,
        ban_s,
      })),
    };
  }

  private install(p: BlockPattern) {
    this.patterns.set(p.name, { pattern: compilePattern(p), counter: new HitCounter(), matches: 0, bans: 0 });
  }

  private save() {
    this.file.write([...this.patterns.values()].map(({ pattern: { re: _re, ...p } }) => p));
  }

  async add(body: BlockPatternBody) {
    const p = patternOf(body);
    const why = await untailable(p.file);
    if (why) throw new InputError(`file: ${why}`);
    const existed = this.patterns.has(p.name);
    this.install(p);
    this.save();
    // Follow a new file from its end now, not at the detection loop's next tick: every line written
    // after this answer is matched, however busy the host is.
    if (!this.tails.has(p.file)) {
      const lines = await this.tailOf(p.file).poll();
      if (lines && lines.length > 0 && !this.stopped) this.match(p.file, lines);
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
