import type { AutofetchToggleBody } from '@palisade/protocol/control-schemas/standalone';
import type { FeedDefinition } from '../config/protection-settings.js';
import { bigIntToAddress, contains, InputError, type Network, readNetwork } from '../lib/net.js';
import type { FeatureContext } from './context.js';
import { fetchText, parseFeed } from './feeds.js';
import { disjoint, type Element, elementOf } from './firewall.js';
import type { ListBook } from './list-book.js';
import type { StateFile, StateStore } from './store.js';

interface FeedState {
  name: string;
  url: string;
  enabled: boolean;
  entries: number;
  invalid: number;
  last_fetch_at: number | null;
  last_ok_at: number | null;
  last_error: string | null;
  elements: Element[];
  /** `elements` in address order, made on the first page asked for. */
  sorted?: Network[];
}

interface AutofetchFile {
  enabled: boolean;
  disabled: string[];
}

const FEED_TIMEOUT_MS = 30_000;

/**
 * Blocklist feeds: which are on (autofetch.json), their last good lists (feeds/<name>.txt) and the
 * `feed` set, where never-add and the whitelist take addresses out and never-remove adds them.
 */
export class Autofetch {
  private file: StateFile<AutofetchFile>;
  private lists: StateStore;
  private state: AutofetchFile;
  private feeds = new Map<string, FeedState>();

  constructor(
    private readonly ctx: FeatureContext,
    private readonly book: ListBook,
  ) {
    this.file = ctx.store.json<AutofetchFile>('autofetch.json', { enabled: false, disabled: [] });
    this.lists = ctx.store.sub('feeds');
    this.state = this.file.read();
    this.load(ctx.settings().feeds);
  }

  get enabled(): boolean {
    return this.state.enabled;
  }

  /** Takes the feed definitions of a (re)loaded config; a feed whose URL is unchanged keeps its list. */
  load(defs: FeedDefinition[]): void {
    const old = this.feeds;
    this.feeds = new Map();
    for (const def of defs) {
      const prev = old.get(def.name);
      const f: FeedState =
        prev && prev.url === def.url
          ? prev
          : {
              name: def.name,
              url: def.url,
              enabled: true,
              entries: 0,
              invalid: 0,
              last_fetch_at: null,
              last_ok_at: null,
              last_error: null,
              elements: [],
            };
      f.enabled = !this.state.disabled.includes(def.name);
      if (!prev) {
        try {
          const parsed = parseFeed(this.lists.text(`${def.name}.txt`).read() ?? '');
          f.elements = parsed.networks.map((n) => elementOf(n));
          f.entries = f.elements.length;
        } catch {}
      }
      this.feeds.set(def.name, f);
    }
  }

  /** The `feed` set. */
  elements(): Element[] {
    if (!this.state.enabled) return [];
    const out: Element[] = [];
    const neverAdd = this.book.lists['never-add'];
    for (const f of this.feeds.values()) {
      if (!f.enabled) continue;
      for (const e of f.elements) {
        const net = elementNetwork(e);
        if (net && (neverAdd.covering(net) || this.book.whitelisted(net))) continue;
        out.push(e);
      }
    }
    for (const e of this.book.lists['never-remove'].stored()) out.push(elementOf(e.net));
    return disjoint(out);
  }

  /** The feed named `name`; an InputError naming `param` when there is none. */
  private feed(name: string, param: string): FeedState {
    const f = this.feeds.get(name);
    if (!f)
      throw new InputError(
        `${param}: unknown feed "${name.slice(0, 40)}" (known: ${[...this.feeds.keys()].join(', ') || 'none'})`,
      );
    return f;
  }

  /**
   * Each feed line holding `net`, and whether it is in the `feed` set: autofetch and the feed on,
   * and no never-add or whitelist entry covering the whole line (one covering only part of a
   * range does not take the range out; docs/protection.md, "Why is this address blocked?").
   */
  holding(net: Network) {
    const out: { feed: string; range: Network; enabled: boolean; blocking: boolean; kept_out_by: string | null }[] = [];
    for (const f of this.feeds.values())
      for (const e of f.elements) {
        const inside = elementNetwork(e);
        if (!inside || !contains(inside, net)) continue;
        const range = named(inside);
        const keptOut = this.book.lists['never-add'].covering(range) ?? this.book.whitelist.covering(range);
        out.push({
          feed: f.name,
          range,
          enabled: f.enabled,
          blocking: this.state.enabled && f.enabled && !keptOut,
          kept_out_by: keptOut?.text ?? null,
        });
      }
    return out;
  }

  /** One page of a feed's entries in address order; `cursor` is the last entry of the previous page. */
  page(name: string, cursor: string | undefined, limit: number) {
    const f = this.feed(name, 'source');
    f.sorted ??= f.elements
      .map((e) => named(elementNetwork(e)!))
      .sort((a, b) => (after(b, a) ? -1 : after(a, b) ? 1 : 0));
    let from = 0;
    if (cursor !== undefined) {
      const last = readNetwork(cursor);
      if (!last) throw new InputError('cursor: expected the next_cursor of the previous page');
      from = f.sorted.findIndex((n) => after(n, last));
      if (from < 0) from = f.sorted.length;
    }
    const entries = f.sorted.slice(from, from + limit).map((n) => n.text);
    return {
      feed: f.name,
      enabled: this.state.enabled && f.enabled,
      total: f.sorted.length,
      entries,
      next_cursor: from + limit < f.sorted.length ? entries.at(-1)! : null,
    };
  }

  view() {
    return {
      enabled: this.state.enabled,
      feeds: [...this.feeds.values()].map(({ elements: _e, ...f }) => f),
    };
  }

  /** The /metrics summary. */
  summary() {
    return {
      enabled: this.state.enabled,
      feeds: [...this.feeds.values()].map((f) => ({
        name: f.name,
        enabled: f.enabled,
        entries: f.entries,
        last_ok_at: f.last_ok_at,
        last_error: f.last_error,
      })),
    };
  }

  toggle(body: AutofetchToggleBody) {
    if (body.feed !== undefined) {
      const f = this.feeds.get(body.feed);
      if (!f)
        throw new InputError(
          `feed: unknown feed "${body.feed.slice(0, 40)}" (known: ${[...this.feeds.keys()].join(', ')})`,
        );
      f.enabled = body.enabled ?? !f.enabled;
      this.state.disabled = [...this.feeds.values()].filter((x) => !x.enabled).map((x) => x.name);
    } else this.state.enabled = body.enabled ?? !this.state.enabled;
    this.file.write(this.state);
    this.ctx.markDirty('feed');
    return this.view();
  }

  /** Fetches the enabled feeds (or one); a failed fetch keeps the previous list and is reported. */
  async fetch(only?: string) {
    if (only !== undefined && !this.feeds.has(only)) throw new InputError(`feed: unknown feed "${only.slice(0, 40)}"`);
    const targets = [...this.feeds.values()].filter((f) => (only ? f.name === only : f.enabled));
    const clock = this.ctx.deps.clock;
    await Promise.all(
      targets.map(async (f) => {
        f.last_fetch_at = clock();
        try {
          const parsed = parseFeed(await fetchText(f.url, FEED_TIMEOUT_MS));
          if (parsed.networks.length === 0)
            throw new Error(`no IPs or CIDRs in the answer (${parsed.invalid} lines not understood)`);
          f.elements = parsed.networks.map((n) => elementOf(n));
          f.sorted = undefined;
          f.entries = f.elements.length;
          f.invalid = parsed.invalid;
          f.last_ok_at = clock();
          f.last_error = null;
          this.lists.text(`${f.name}.txt`).write(`${parsed.networks.map((n) => n.text).join('\n')}\n`);
        } catch (err) {
          f.last_error = `${(err as Error).message}; the previous list (${f.entries} entries) is kept`;
          this.ctx.log('warn', `protection: feed ${f.name}: ${f.last_error}`);
        }
      }),
    );
    this.ctx.markDirty('feed');
    await this.ctx.settle();
    return this.view();
  }
}

function elementNetwork(e: Element): Network | null {
  // Feed elements come from CIDRs, so start and end always describe one network.
  const size = e.end - e.start + 1n;
  const hostBits = size.toString(2).length - 1;
  const prefix = (e.family === 4 ? 32 : 128) - hostBits;
  return { text: '', family: e.family, start: e.start, prefix };
}

/** `n` with its canonical text (elementNetwork leaves it out: the feed set is built without it). */
function named(n: Network): Network {
  const host = bigIntToAddress(n.start, n.family);
  return { ...n, text: n.prefix === (n.family === 4 ? 32 : 128) ? host : `${host}/${n.prefix}` };
}

/** True when `a` comes after `b` in address order: v4 before v6, then by first address, then wider first. */
function after(a: Network, b: Network): boolean {
  if (a.family !== b.family) return a.family > b.family;
  if (a.start !== b.start) return a.start > b.start;
  return a.prefix > b.prefix;
}
