import type { ListEntryInput, ListImportBody } from '@palisade/protocol/control-schemas/standalone';
import { InputError, type Network, parseNetwork, refuseEverything } from '../lib/net.js';
import type { FeatureContext } from './context.js';
import { NotFound } from './errors.js';
import { disjoint, type Element, elementOf } from './firewall.js';
import { type EntrySource, entryOf, IpList, importItems } from './lists.js';

export type ListName = 'whitelist' | 'blacklist' | 'never-add' | 'never-remove';

/**
 * The four lists (each in `<name>.json`) and their control API. `allowed` says why an address may
 * not be blocked (the guard: whitelist, SSH peers, console).
 */
export class ListBook {
  readonly lists: Record<ListName, IpList>;

  constructor(
    private readonly ctx: FeatureContext,
    private readonly allowed: (net: Network) => string | null,
  ) {
    const onChange = (list: IpList) => {
      if (list.name === 'whitelist') ctx.markDirty('allow', 'manual', 'attack', 'feed');
      else if (list.name === 'blacklist') ctx.markDirty('manual', 'attack');
      else ctx.markDirty('feed');
    };
    const make = (name: ListName) =>
      new IpList(name, ctx.store.json(`${name}.json`, { entries: [] }), onChange, ctx.deps.timers, {
        clock: ctx.deps.clock,
        warn: (m) => ctx.log('warn', m),
      });
    this.lists = {
      whitelist: make('whitelist'),
      blacklist: make('blacklist'),
      'never-add': make('never-add'),
      'never-remove': make('never-remove'),
    };
  }

  get whitelist(): IpList {
    return this.lists.whitelist;
  }

  get blacklist(): IpList {
    return this.lists.blacklist;
  }

  expire(now: number): void {
    for (const l of Object.values(this.lists)) l.expire(now);
  }

  flush(): void {
    for (const l of Object.values(this.lists)) l.flush();
  }

  whitelisted(net: Network): boolean {
    return this.lists.whitelist.covering(net) !== null;
  }

  /** The `manual` or `attack` set: live blacklist entries of that origin the whitelist does not cover. */
  blocked(origin: 'manual' | 'attack'): Element[] {
    const now = this.ctx.deps.clock();
    const out: Element[] = [];
    for (const e of this.lists.blacklist.stored()) {
      const from = e.source === 'attack' ? 'attack' : 'manual';
      if (from !== origin || (e.expires_at !== undefined && e.expires_at <= now) || this.whitelisted(e.net)) continue;
      out.push(elementOf(e.net, e.expires_at));
    }
    return disjoint(out);
  }

  /** True while `net` is covered by a blacklist entry that has not expired. */
  isBanned(net: Network): boolean {
    const hit = this.lists.blacklist.covering(net);
    if (!hit) return false;
    const e = [...this.lists.blacklist.stored()].find((x) => x.net.text === hit.text);
    return e !== undefined && (e.expires_at === undefined || e.expires_at > this.ctx.deps.clock());
  }

  listEntries(name: ListName) {
    return { entries: this.lists[name].list() };
  }

  addEntry(name: ListName, body: ListEntryInput) {
    const input = entryOf(body);
    const why = this.refusal(name)?.(input.net);
    if (why) throw new InputError(why);
    const r = this.lists[name].add(input, 'manual', this.ctx.deps.clock());
    return { added: r.added, entry: r.entry };
  }

  importEntries(name: ListName, body: ListImportBody) {
    const items = importItems(body);
    return this.lists[name].import(items, 'import', this.ctx.deps.clock(), this.refusal(name));
  }

  /** Why an entry may not go on a list that blocks: /0 would block everything, and the whitelist always wins. */
  private refusal(name: ListName): ((net: Network) => string | null) | undefined {
    if (name === 'blacklist')
      return (net) => {
        const guarded = this.allowed(net);
        return refuseEverything(net) ?? (guarded ? `ip: ${guarded}` : null);
      };
    if (name === 'never-remove') return refuseEverything;
    return undefined;
  }

  removeEntry(name: ListName, ip: string) {
    const net = parseNetwork(ip);
    if (!this.lists[name].remove(net))
      throw new NotFound(
        `${net.text} is not on the ${name === 'whitelist' || name === 'blacklist' ? name : `${name} list`}`,
      );
    return { removed: net.text };
  }

  clearList(name: ListName, source?: EntrySource) {
    return { removed: this.lists[name].clear(source) };
  }
}
