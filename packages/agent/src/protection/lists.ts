import {
  checkControl,
  ENTRY_SOURCES,
  type EntrySource,
  type ImportAnswer,
  type ListEntry,
  type ListEntryInput,
  type ListImportBody,
  listEntryInput,
  MAX_TTL_S,
} from '@palisade/protocol/control-schemas/standalone';
import { contains, InputError, type Network, NetworkSet, parseNetwork } from '../lib/net.js';
import { type Cancel, realTimers, type Timers } from './context.js';
import type { StateFile } from './store.js';

const SOURCES: readonly EntrySource[] = ENTRY_SOURCES;

export type { EntrySource, ListEntry };

/** One entry checked with the control schema (a bare string is an address): the network parsed, an empty note left out. */
export function parseEntryInput(raw: unknown): { net: Network; note?: string; ttl_s?: number } {
  if (typeof raw === 'string') return { net: parseNetwork(raw) };
  const checked = checkControl(listEntryInput, raw);
  if (!checked.ok) throw new InputError(checked.problem);
  return entryOf(checked.value);
}

/** A checked `{ip, note?, ttl_s?}` with its address parsed; throws an InputError naming `ip`. */
export function entryOf(e: ListEntryInput): { net: Network; note?: string; ttl_s?: number } {
  return {
    net: parseNetwork(e.ip),
    ...(e.note ? { note: e.note } : {}),
    ...(e.ttl_s !== undefined && e.ttl_s !== null ? { ttl_s: e.ttl_s } : {}),
  };
}

/** Splits an import body: a JSON array, `{entries}`, or text with one entry per line (`#` and `;` start comments). */
export function importItems(body: ListImportBody): unknown[] {
  if (Array.isArray(body)) return body;
  if (typeof body === 'string')
    return body
      .split(/\r?\n/)
      .map((l) => l.replace(/[#;].*$/, '').trim())
      .filter((l) => l !== '')
      .map((l) => l.split(/\s+/)[0]!);
  return body.entries;
}

interface Stored extends ListEntry {
  net: Network;
}

/** What a list's state file holds. */
export interface ListFile {
  entries: ListEntry[];
}

/**
 * One named list of IPs and CIDRs (whitelist, blacklist, never-add, never-remove), kept in memory
 * and saved whole to its state file (`<state dir>/protection/<name>.json`) shortly after each change.
 */
export class IpList {
  private entries = new Map<string, Stored>();
  private index: NetworkSet | null = null;
  private cancelSave: Cancel | null = null;
  /** Bumped on every change, so the firewall knows when to sync. */
  version = 0;

  constructor(
    readonly name: string,
    private readonly file: StateFile<ListFile> | null,
    private readonly onChange: (list: IpList) => void = () => {},
    private readonly timers: Timers = realTimers(),
    private readonly loaded: { clock: () => number; warn: (message: string) => void } = {
      clock: Date.now,
      warn: () => {},
    },
  ) {
    if (file) this.load(file);
  }

  private load(file: StateFile<ListFile>) {
    const now = this.loaded.clock();
    const latest = now + MAX_TTL_S * 1000;
    let clamped = 0;
    for (const e of file.read().entries ?? []) {
      try {
        const net = parseNetwork(e.ip);
        const source = SOURCES.includes(e.source) ? e.source : 'manual';
        const entry: Stored = { ...e, ip: net.text, source, net };
        if (
          entry.expires_at !== undefined &&
          (typeof entry.expires_at !== 'number' || !Number.isFinite(entry.expires_at))
        )
          throw new InputError('expires_at: not a time');
        // An older agent allowed ten-year bans, which nftables refuses (docs/protection.md, "Ban lengths"):
        // such an entry is kept, shortened to the longest allowed.
        if (entry.expires_at !== undefined && entry.expires_at > latest) {
          entry.expires_at = latest;
          entry.ttl_s = MAX_TTL_S;
          clamped++;
        }
        this.entries.set(net.text, entry);
      } catch {
        // An entry edited into an invalid state by hand is dropped rather than blocking start-up.
      }
    }
    if (clamped > 0) {
      this.loaded.warn(
        `protection: ${clamped} ${this.name} entr${clamped === 1 ? 'y' : 'ies'} in ${file.path} expired more than ${MAX_TTL_S} s from now; shortened to ${MAX_TTL_S} s (the longest ban nftables takes)`,
      );
      this.changed();
    }
  }

  get size(): number {
    return this.entries.size;
  }

  private changed() {
    this.index = null;
    this.version++;
    this.onChange(this);
    if (!this.file || this.cancelSave) return;
    this.cancelSave = this.timers.after(200, () => this.flush(), { unref: true });
  }

  /** Writes pending changes now (also called on shutdown). */
  flush(): void {
    this.cancelSave?.();
    this.cancelSave = null;
    if (!this.file) return;
    this.file.write({ entries: [...this.entries.values()].map(publicEntry) });
  }

  /** Adds or updates one entry; `added` is false when it was already there (its note and expiry are updated). */
  add(input: { net: Network; note?: string; ttl_s?: number }, source: EntrySource, now: number) {
    const existing = this.entries.get(input.net.text);
    const entry: Stored = {
      ip: input.net.text,
      ...(input.note !== undefined ? { note: input.note } : existing?.note ? { note: existing.note } : {}),
      ...(input.ttl_s !== undefined ? { ttl_s: input.ttl_s, expires_at: now + input.ttl_s * 1000 } : {}),
      source: existing?.source ?? source,
      added_at: existing?.added_at ?? now,
      net: input.net,
    };
    this.entries.set(entry.ip, entry);
    this.changed();
    return { added: existing === undefined, entry: publicEntry(entry) };
  }

  /** Imports many entries at once (one change notification); existing entries are skipped. */
  import(items: unknown[], source: EntrySource, now: number, refuse?: (net: Network) => string | null): ImportAnswer {
    const result: ImportAnswer = { added: 0, skipped: 0, invalid: 0 };
    const examples: string[] = [];
    for (const item of items) {
      let input: ReturnType<typeof parseEntryInput>;
      try {
        input = parseEntryInput(item);
        const why = refuse?.(input.net);
        if (why) throw new InputError(why);
      } catch (err) {
        result.invalid++;
        if (examples.length < 10) examples.push((err as Error).message);
        continue;
      }
      if (this.entries.has(input.net.text)) {
        result.skipped++;
        continue;
      }
      const entry: Stored = {
        ip: input.net.text,
        ...(input.note !== undefined ? { note: input.note } : {}),
        ...(input.ttl_s !== undefined ? { ttl_s: input.ttl_s, expires_at: now + input.ttl_s * 1000 } : {}),
        source,
        added_at: now,
        net: input.net,
      };
      this.entries.set(entry.ip, entry);
      result.added++;
    }
    if (result.added > 0) this.changed();
    if (examples.length > 0) result.invalid_examples = examples;
    return result;
  }

  remove(net: Network): boolean {
    const had = this.entries.delete(net.text);
    if (had) this.changed();
    return had;
  }

  /** Removes every entry, or only those of one source; answers how many went. */
  clear(source?: EntrySource): number {
    let removed = 0;
    for (const [k, e] of this.entries) {
      if (source && e.source !== source) continue;
      this.entries.delete(k);
      removed++;
    }
    if (removed > 0) this.changed();
    return removed;
  }

  /** Drops expired entries; answers them. */
  expire(now: number): ListEntry[] {
    const gone: ListEntry[] = [];
    for (const [k, e] of this.entries) {
      if (e.expires_at !== undefined && e.expires_at <= now) {
        this.entries.delete(k);
        gone.push(publicEntry(e));
      }
    }
    if (gone.length > 0) this.changed();
    return gone;
  }

  has(net: Network): boolean {
    return this.entries.has(net.text);
  }

  /** The entry (an address or a network) covering `net`, if any. */
  covering(net: Network): Network | null {
    this.index ??= new NetworkSet([...this.entries.values()].map((e) => e.net));
    return this.index.find(net);
  }

  /** Every entry (an address or a network) containing `net`, for `GET blacklist?ip=`. */
  holding(net: Network): ListEntry[] {
    return [...this.entries.values()].filter((e) => contains(e.net, net)).map(publicEntry);
  }

  /** Entries with their parsed networks, for the firewall. */
  stored(): Iterable<{ net: Network; expires_at?: number; source: EntrySource }> {
    return this.entries.values();
  }

  list(): ListEntry[] {
    return [...this.entries.values()].map(publicEntry);
  }
}

function publicEntry(e: Stored): ListEntry {
  const { net: _net, ...rest } = e;
  return rest;
}
