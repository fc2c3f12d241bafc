import type { Enforcement, Holder, ListEntry, LookupAnswer } from '@palisade/protocol/control-schemas/standalone';
import { InputError, type Network, readNetwork } from '../lib/net.js';
import type { Autofetch } from './autofetch.js';
import type { GeoFilter } from './geo-filter.js';
import type { Guard } from './guard.js';
import type { ListBook } from './list-book.js';

/** The parts a lookup reads; the engine hands them over. */
export interface LookupParts {
  book: ListBook;
  guard: Guard;
  feeds: Autofetch;
  geo: GeoFilter;
  enforcement: Enforcement;
  now: number;
}

/** `?ip=`: one address, parsed strictly (docs/protection.md, "Addresses"); a range is refused. */
export function parseLookupAddress(raw: string): Network {
  const text = raw.trim();
  const net = readNetwork(text);
  if (!net) throw new InputError(`ip: "${text.slice(0, 80)}" is not an IP address; expected one, e.g. 203.0.113.7`);
  if (net.prefix !== (net.family === 4 ? 32 : 128))
    throw new InputError(`ip: "${net.text}" is a range; expected one address, e.g. 203.0.113.7`);
  return net;
}

const describe = (e: ListEntry) =>
  `${e.ip} (${e.source}${e.note ? `, "${e.note}"` : ''}${e.expires_at ? `, until ${new Date(e.expires_at).toISOString()}` : ''})`;

/**
 * Every source holding `net` and what the firewall does to a new connection from it, walked in
 * the order of the nftables chain (docs/protection.md, "Enforcement"): loopback, the allow set
 * (whitelist, SSH sessions, the console), manual and attack bans, then feeds (with never-remove)
 * and the geo rule. The first rule that accepts or drops decides; the later holders are listed
 * with effect `none`, so the answer shows everything that holds the address.
 */
export function lookUp(net: Network, p: LookupParts): LookupAnswer {
  const holders: Holder[] = [];
  let decided: Holder | null = null;
  /** Adds a holder; `effect` is what its rule would do if nothing earlier had decided. */
  const add = (h: Holder) => {
    if (h.effect !== 'none') {
      if (decided)
        h = { ...h, effect: 'none', detail: `${h.detail}; not reached: the ${decided.kind} rule comes first` };
      else decided = h;
    }
    holders.push(h);
  };
  const live = (e: ListEntry) => e.expires_at === undefined || e.expires_at > p.now;
  const lists = p.book.lists;
  const guarded = p.guard.allowances(net);

  if (guarded.includes('loopback'))
    add({
      kind: 'loopback',
      range: null,
      effect: 'accept',
      detail: "loopback: this host's own programs, always accepted",
    });
  const whitelist = lists.whitelist.holding(net).filter(live);
  for (const entry of whitelist)
    add({
      kind: 'whitelist',
      range: entry.ip,
      entry,
      effect: 'accept',
      detail: `on the whitelist as ${describe(entry)}; the whitelist is accepted before any drop`,
    });
  if (guarded.includes('ssh_session'))
    add({ kind: 'ssh_session', range: net.text, effect: 'accept', detail: 'the peer of an active SSH session' });
  if (guarded.includes('console'))
    add({ kind: 'console', range: net.text, effect: 'accept', detail: 'the console this agent enrolled with' });
  const blacklist = lists.blacklist.holding(net).filter(live);
  for (const entry of blacklist)
    add({
      kind: 'blacklist',
      range: entry.ip,
      entry,
      effect: 'drop',
      detail: `on the blacklist as ${describe(entry)}${entry.source === 'attack' ? ': banned for an attack' : ''}`,
    });

  const autofetchOn = p.feeds.enabled;
  const feeds = p.feeds.holding(net);
  for (const entry of lists['never-add'].holding(net).filter(live)) {
    const still = feeds.filter((f) => f.blocking).map((f) => `${f.feed} (${f.range.text})`);
    add({
      kind: 'never-add',
      range: entry.ip,
      entry,
      effect: 'none',
      detail:
        still.length > 0
          ? `on never-add as ${entry.ip}, but it covers only part of the feed range, so ${still.join(', ')} still blocks it`
          : `on never-add as ${entry.ip}: feeds do not block it`,
    });
  }
  for (const entry of lists['never-remove'].holding(net).filter(live))
    add({
      kind: 'never-remove',
      range: entry.ip,
      entry,
      effect: autofetchOn ? 'drop' : 'none',
      detail: autofetchOn
        ? `on never-remove as ${entry.ip}: blocked with the feeds`
        : `on never-remove as ${entry.ip}, but autofetch is off, so feeds block nothing`,
    });
  for (const f of feeds)
    add({
      kind: 'feed',
      range: f.range.text,
      feed: f.feed,
      effect: f.blocking ? 'drop' : 'none',
      detail: f.blocking
        ? `feed ${f.feed} lists ${f.range.text}`
        : `feed ${f.feed} lists ${f.range.text}, but ${
            !autofetchOn
              ? 'autofetch is off'
              : !f.enabled
                ? 'that feed is turned off'
                : `${f.kept_out_by} (never-add or whitelist) takes the range out`
          }`,
    });

  const mode = p.geo.mode;
  if (mode !== 'off') {
    const g = p.geo.holding(net);
    if (mode === 'deny' && g.country)
      add({
        kind: 'geo',
        range: g.range,
        country: g.country,
        effect: 'drop',
        detail: `in ${g.country} (${g.range}), a denied country`,
      });
    if (mode === 'allow' && g.country)
      add({
        kind: 'geo',
        range: g.range,
        country: g.country,
        effect: 'none',
        detail: `in ${g.country} (${g.range}), an allowed country: the geo rule lets it through`,
      });
    if (mode === 'allow' && !g.country && !g.reserved)
      add({
        kind: 'geo',
        range: null,
        effect: 'drop',
        detail: `in none of the allowed countries (${p.geo.countries.join(', ')}): geo allow mode drops it`,
      });
  }

  const decider = decided as Holder | null;
  const verdict = decider?.effect === 'drop' ? 'drop' : 'accept';
  const monitor = p.enforcement.backend === 'monitor';
  const what = decider
    ? `${verdict === 'drop' ? 'Blocked' : 'Allowed'}: ${decider.detail}.`
    : 'Not blocked: no list, feed or geo rule holds it.';
  return {
    ip: net.text,
    verdict,
    decided_by: decider?.kind ?? null,
    enforcement: p.enforcement,
    on_both_lists: whitelist.length > 0 && blacklist.length > 0,
    summary: monitor ? `${what} Monitor-only: this server blocks nothing; that is what nftables would do.` : what,
    holders,
  };
}
