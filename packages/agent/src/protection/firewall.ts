import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { bigIntToAddress, type Network, parseNetwork } from '../lib/net.js';

/** Where a block came from; each origin has its own nft sets and counters. */
export type Origin = 'manual' | 'attack' | 'feed' | 'geo';
export const ORIGINS: Origin[] = ['manual', 'attack', 'feed', 'geo'];
export type SetName = 'allow' | Origin;
export const SET_NAMES: SetName[] = ['allow', ...ORIGINS];

/** One element of a set: a network or an address range, with an optional expiry (epoch ms). */
export interface Element {
  family: 4 | 6;
  start: bigint;
  end: bigint;
  expiresAt?: number;
}

export type GeoMode = 'off' | 'allow' | 'deny';

/** What the firewall should hold; the engine computes it from lists, bans, feeds and geo. */
export interface WantedState {
  sets: Record<SetName, Element[]>;
  geoMode: GeoMode;
}

export interface DriftReport {
  checks: number;
  repairs: number;
  last_check_at: number | null;
  last_drift: string | null;
  last_drift_at: number | null;
  last_error: string | null;
}

/** The enforcement backend: nftables, or monitor-only (which applies nothing). */
export interface Firewall {
  readonly kind: 'nftables' | 'monitor';
  /** Replaces the listed sets whole (or the whole table) in one transaction. */
  apply(wanted: WantedState, sets: SetName[] | 'all'): Promise<void>;
  /** Compares the live table with `wanted` and repairs what differs. */
  reconcile(wanted: WantedState): Promise<void>;
  counters(): Record<string, { packets: number; bytes: number }>;
  drift(): DriftReport;
  /** Removes the table (clean shutdown). */
  remove(): Promise<void>;
}

export function elementOf(net: Network, expiresAt?: number): Element {
  const width = net.family === 4 ? 32 : 128;
  const end = net.start | ((1n << BigInt(width - net.prefix)) - 1n);
  return { family: net.family, start: net.start, end, ...(expiresAt !== undefined ? { expiresAt } : {}) };
}

/** Sorts and drops elements that overlap an earlier one (nft interval sets refuse overlaps). */
export function disjoint(elements: Element[]): Element[] {
  const sorted = [...elements].sort((a, b) =>
    a.family !== b.family
      ? a.family - b.family
      : a.start < b.start
        ? -1
        : a.start > b.start
          ? 1
          : b.end > a.end
            ? 1
            : -1,
  );
  const out: Element[] = [];
  let last: Element | null = null;
  for (const e of sorted) {
    if (last && last.family === e.family && e.start <= last.end) {
      if (e.end > last.end) {
        // Partly overlapping ranges (only possible with feed ranges): extend the earlier one.
        last.end = e.end;
      }
      if (last.expiresAt !== undefined && (e.expiresAt === undefined || e.expiresAt > last.expiresAt))
        last.expiresAt = e.expiresAt;
      continue;
    }
    last = { ...e };
    out.push(last);
  }
  return out;
}

function elementText(e: Element): string {
  const a = bigIntToAddress(e.start, e.family);
  return e.start === e.end ? a : `${a}-${bigIntToAddress(e.end, e.family)}`;
}

const setId = (name: SetName, family: 4 | 6) => `${name}_v${family}`;
const TABLE = 'inet palisade';

function setDeclarations(): string {
  const lines: string[] = [];
  for (const name of SET_NAMES)
    for (const family of [4, 6] as const) {
      const type = family === 4 ? 'ipv4_addr' : 'ipv6_addr';
      const flags = name === 'allow' || name === 'feed' || name === 'geo' ? 'interval' : 'interval,timeout';
      lines.push(`  set ${setId(name, family)} { type ${type}; flags ${flags}; }`);
      lines.push(`  counter ${setId(name, family)} {}`);
    }
  return lines.join('\n');
}

/** The input chain: loopback and the whitelist first, then explicit bans, then established traffic, then feeds and geo. */
export function chainRules(geoMode: GeoMode): string[] {
  const match = (name: SetName, family: 4 | 6, verdict: string, negate = false) =>
    `${family === 4 ? 'ip' : 'ip6'} saddr ${negate ? '!= ' : ''}@${setId(name, family)} counter name "${setId(name, family)}" ${verdict}`;
  const rules = ['iif "lo" accept'];
  for (const f of [4, 6] as const) rules.push(match('allow', f, 'accept'));
  for (const origin of ['manual', 'attack'] as const)
    for (const f of [4, 6] as const) rules.push(match(origin, f, 'drop'));
  rules.push('ct state established,related accept');
  for (const f of [4, 6] as const) rules.push(match('feed', f, 'drop'));
  if (geoMode !== 'off') for (const f of [4, 6] as const) rules.push(match('geo', f, 'drop', geoMode === 'allow'));
  return rules;
}

/** One set's elements of one family as nft text (`addr`, `a-b`, `… timeout Ns`); expired ones left out. */
function elementTexts(elements: Element[], family: 4 | 6, now: number): { element: Element; text: string }[] {
  const out: { element: Element; text: string }[] = [];
  for (const e of elements) {
    if (e.family !== family) continue;
    if (e.expiresAt !== undefined) {
      const s = Math.ceil((e.expiresAt - now) / 1000);
      if (s <= 0) continue;
      out.push({ element: e, text: `${elementText(e)} timeout ${s}s` });
    } else out.push({ element: e, text: elementText(e) });
  }
  return out;
}

const addLines = (id: string, texts: string[]): string[] => {
  const out: string[] = [];
  for (let i = 0; i < texts.length; i += 5000)
    out.push(`add element ${TABLE} ${id} { ${texts.slice(i, i + 5000).join(', ')} }`);
  return out;
};

function elementsScript(name: SetName, elements: Element[], now: number): string[] {
  const out: string[] = [];
  for (const family of [4, 6] as const) {
    const id = setId(name, family);
    out.push(`flush set ${TABLE} ${id}`);
    out.push(
      ...addLines(
        id,
        elementTexts(elements, family, now).map((t) => t.text),
      ),
    );
  }
  return out;
}

/** The whole table, from scratch: declared, deleted and declared again, so the transaction works whether it existed or not. */
export function tableScript(wanted: WantedState, now: number): string {
  const lines = [
    `table ${TABLE} {}`,
    `delete table ${TABLE}`,
    `table ${TABLE} {`,
    setDeclarations(),
    '  chain input {',
    '    type filter hook input priority filter - 5; policy accept;',
    ...chainRules(wanted.geoMode).map((r) => `    ${r}`),
    '  }',
    '}',
  ];
  for (const name of SET_NAMES)
    lines.push(...elementsScript(name, wanted.sets[name], now).filter((l) => !l.startsWith('flush')));
  return `${lines.join('\n')}\n`;
}

export type RunNft = (args: string[], input?: string) => Promise<string>;

/** Runs `nft` (after `prefix`, e.g. `ip netns exec <ns>` in the benches); its output, or an error with its reason. */
export const nftRunner =
  (prefix: string[] = []): RunNft =>
  (args, input) =>
    new Promise((resolve, reject) => {
      const [file, ...rest] = [...prefix, 'nft', ...args];
      const child = spawn(file!, rest, { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        err += d;
      });
      child.on('error', (e) => reject(e));
      child.on('close', (code) => {
        if (code === 0) resolve(out);
        else
          reject(
            new Error(`nft ${args.join(' ')} failed (${code}): ${err.trim().split('\n').slice(0, 3).join(' | ')}`),
          );
      });
      child.stdin.on('error', () => {});
      child.stdin.end(input ?? '');
    });

export const runNft: RunNft = nftRunner();

interface NftJsonElem {
  elem?: { val: unknown; expires?: number };
}

function parseNftValue(v: unknown): { family: 4 | 6; start: bigint; end: bigint } | null {
  if (typeof v === 'string') {
    const n = parseNetwork(v);
    return elementOf(n);
  }
  if (v && typeof v === 'object') {
    const o = v as { prefix?: { addr: string; len: number }; range?: [string, string]; elem?: { val: unknown } };
    if (o.prefix) return elementOf(parseNetwork(`${o.prefix.addr}/${o.prefix.len}`));
    if (o.range) {
      const a = elementOf(parseNetwork(o.range[0]));
      const b = elementOf(parseNetwork(o.range[1]));
      return { family: a.family, start: a.start, end: b.end };
    }
    if (o.elem) return parseNftValue(o.elem.val);
  }
  return null;
}

const key = (e: { family: number; start: bigint; end: bigint }) => `${e.family}:${e.start}-${e.end}`;

/** The nftables backend. Every change goes through one queue, so transactions never interleave. */
export function nftablesFirewall(opts: { run?: RunNft; clock: () => number; log: (m: string) => void }): Firewall {
  const run = opts.run ?? runNft;
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const next = queue.then(work, work);
    queue = next.catch(() => {});
    return next;
  };
  let counters: Record<string, { packets: number; bytes: number }> = {};
  let builtMode: GeoMode | null = null;
  const drift: DriftReport = {
    checks: 0,
    repairs: 0,
    last_check_at: null,
    last_drift: null,
    last_drift_at: null,
    last_error: null,
  };

  /**
   * Elements nftables refused (per set id, by element key, with its reason): the rest of their set
   * is applied without them, they stay on the agent's lists, and `drift().last_error` names them.
   */
  const refused = new Map<string, Map<string, string>>();
  const refusedMessage = (): string | null => {
    const all: string[] = [];
    for (const [, byKey] of refused) for (const why of byKey.values()) all.push(why);
    if (all.length === 0) return null;
    return `nftables refused ${all.length} element${all.length === 1 ? '' : 's'}, kept on the lists but not enforced: ${all.slice(0, 3).join('; ')}${all.length > 3 ? '; …' : ''}`;
  };
  const nftReason = (err: unknown) => {
    const m = /Error: ([^|]+)/.exec((err as Error).message);
    return (m?.[1] ?? (err as Error).message).trim();
  };

  /** Adds `items` to set `id`, halving a refused batch until each refused element is found alone. */
  async function addSplitting(id: string, items: { element: Element; text: string }[], into: Map<string, string>) {
    if (items.length === 0) return;
    try {
      await run(
        ['-f', '-'],
        `${addLines(
          id,
          items.map((i) => i.text),
        ).join('\n')}\n`,
      );
    } catch (err) {
      if (items.length === 1) {
        const [only] = items;
        into.set(key(only!.element), `${id} ${only!.text} (${nftReason(err)})`);
        return;
      }
      const mid = Math.ceil(items.length / 2);
      await addSplitting(id, items.slice(0, mid), into);
      await addSplitting(id, items.slice(mid), into);
    }
  }

  /** Fills the named sets one by one; a set nftables refuses as a whole is filled element by element. */
  async function fill(wanted: WantedState, names: readonly SetName[], now: number) {
    for (const name of names)
      for (const family of [4, 6] as const) {
        const id = setId(name, family);
        const items = elementTexts(wanted.sets[name], family, now);
        const byKey = new Map<string, string>();
        try {
          await run(
            ['-f', '-'],
            `${[
              `flush set ${TABLE} ${id}`,
              ...addLines(
                id,
                items.map((i) => i.text),
              ),
            ].join('\n')}\n`,
          );
        } catch {
          await run(['-f', '-'], `flush set ${TABLE} ${id}\n`);
          await addSplitting(id, items, byKey);
        }
        const before = refused.get(id)?.size ?? 0;
        if (byKey.size > 0) refused.set(id, byKey);
        else refused.delete(id);
        if (byKey.size > before) opts.log(`nftables: ${refusedMessage()}`);
      }
  }

  /** The whole table in one transaction; when nftables refuses it, the empty table, then each set apart. */
  async function rebuild(wanted: WantedState, now: number) {
    try {
      await run(['-f', '-'], tableScript(wanted, now));
      refused.clear();
      return;
    } catch {}
    const empty = { ...wanted, sets: { allow: [], manual: [], attack: [], feed: [], geo: [] } };
    await run(['-f', '-'], tableScript(empty, now));
    await fill(wanted, SET_NAMES, now);
  }

  async function applyNow(wanted: WantedState, sets: SetName[] | 'all') {
    const now = opts.clock();
    if (sets === 'all' || builtMode !== wanted.geoMode) {
      await rebuild(wanted, now);
      builtMode = wanted.geoMode;
      return;
    }
    const lines: string[] = [];
    for (const name of sets) lines.push(...elementsScript(name, wanted.sets[name], now));
    if (lines.length === 0) return;
    try {
      await run(['-f', '-'], `${lines.join('\n')}\n`);
      for (const name of sets) for (const family of [4, 6] as const) refused.delete(setId(name, family));
    } catch (err) {
      const present = await run(['list', 'table', 'inet', 'palisade']).then(
        () => true,
        () => false,
      );
      if (present) {
        // The table is there: nftables refused an element. The sets go one by one, without it.
        await fill(wanted, sets, now);
        return;
      }
      // A table removed or changed behind our back: that is drift too, repaired by a rebuild.
      drift.last_drift = `set update failed: ${(err as Error).message}`;
      drift.last_drift_at = now;
      opts.log(`nftables drift: ${drift.last_drift}; rebuilding the table`);
      await rebuild(wanted, now);
      drift.repairs++;
    }
  }

  async function reconcileNow(wanted: WantedState) {
    drift.checks++;
    const now = opts.clock();
    drift.last_check_at = now;
    const problems: string[] = [];
    let listing: { nftables?: Record<string, unknown>[] };
    try {
      listing = JSON.parse(await run(['-j', 'list', 'table', 'inet', 'palisade']));
    } catch {
      listing = {};
      problems.push('table inet palisade is missing');
    }
    const items = listing.nftables ?? [];
    const live = new Map<string, Set<string>>();
    const rules: string[] = [];
    const nextCounters: typeof counters = {};
    for (const item of items) {
      if ('set' in item) {
        const s = item.set as { name: string; elem?: NftJsonElem[] };
        const keys = new Set<string>();
        for (const el of s.elem ?? []) {
          const v = parseNftValue(el);
          if (v) keys.add(key(v));
        }
        live.set(s.name, keys);
      } else if ('counter' in item) {
        const c = item.counter as { name: string; packets: number; bytes: number };
        nextCounters[c.name] = { packets: c.packets, bytes: c.bytes };
      } else if ('rule' in item) rules.push(JSON.stringify((item.rule as { expr: unknown }).expr));
    }
    if (items.length > 0) counters = nextCounters;
    const dirty: SetName[] = [];
    if (problems.length === 0) {
      if (rules.length !== chainRules(wanted.geoMode).length)
        problems.push(`input chain has ${rules.length} rules, expected ${chainRules(wanted.geoMode).length}`);
      for (const name of SET_NAMES) {
        for (const family of [4, 6] as const) {
          const have = live.get(setId(name, family));
          if (!have) {
            problems.push(`set ${setId(name, family)} is missing`);
            continue;
          }
          let missing = 0;
          const want = new Set<string>();
          for (const e of wanted.sets[name]) {
            if (e.family !== family) continue;
            want.add(key(e));
            // Elements about to expire may already be gone from the kernel; that is not drift.
            if (e.expiresAt !== undefined && e.expiresAt - now < 5000) continue;
            // An element nftables refused is reported in last_error, not repaired at every check.
            if (!have.has(key(e)) && !refused.get(setId(name, family))?.has(key(e))) missing++;
          }
          let extra = 0;
          for (const k of have) if (!want.has(k)) extra++;
          if (missing > 0 || extra > 0) {
            problems.push(`set ${setId(name, family)}: ${missing} missing, ${extra} unexpected elements`);
            if (!dirty.includes(name)) dirty.push(name);
          }
        }
      }
    }
    if (problems.length === 0) return;
    drift.last_drift = problems.slice(0, 5).join('; ');
    drift.last_drift_at = now;
    opts.log(`nftables drift: ${drift.last_drift}; repairing`);
    const structural = problems.some((p) => !p.startsWith('set ') || p.endsWith('missing'));
    await applyNow(wanted, structural ? 'all' : dirty);
    drift.repairs++;
  }

  return {
    kind: 'nftables',
    apply: (wanted, sets) =>
      serial(() => applyNow(wanted, sets)).then(
        () => {
          drift.last_error = refusedMessage();
        },
        (err: Error) => {
          drift.last_error = err.message;
          throw err;
        },
      ),
    reconcile: (wanted) =>
      serial(() => reconcileNow(wanted)).then(
        () => {
          drift.last_error = refusedMessage();
        },
        (err: Error) => {
          drift.last_error = err.message;
        },
      ),
    counters: () => counters,
    drift: () => ({ ...drift }),
    remove: () =>
      serial(async () => {
        await run(['-f', '-'], `table ${TABLE} {}\ndelete table ${TABLE}\n`).catch(() => {});
      }),
  };
}

/** Monitor-only: detection, lists and alerts work the same; nothing touches the firewall. */
export function monitorFirewall(): Firewall {
  const drift: DriftReport = {
    checks: 0,
    repairs: 0,
    last_check_at: null,
    last_drift: null,
    last_drift_at: null,
    last_error: null,
  };
  return {
    kind: 'monitor',
    apply: async () => {},
    reconcile: async () => {},
    counters: () => ({}),
    drift: () => ({ ...drift }),
    remove: async () => {},
  };
}

const CAP_NET_ADMIN = 12n;

/**
 * Whether this process may change the firewall: it holds CAP_NET_ADMIN (root does; the packaged
 * unit gives it to its own user, docs/agent.md#install). Without /proc: whether it runs as root.
 */
function mayAdministerNetwork(): boolean {
  try {
    const capEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
    if (capEff) return ((BigInt(`0x${capEff}`) >> CAP_NET_ADMIN) & 1n) === 1n;
  } catch {}
  return typeof process.getuid !== 'function' || process.getuid() === 0;
}

/** Whether nftables can be used here: CAP_NET_ADMIN, and `nft` runs. */
export async function nftablesAvailable(run: RunNft = runNft): Promise<string | null> {
  if (!mayAdministerNetwork()) return 'neither root nor CAP_NET_ADMIN';
  try {
    await run(['list', 'tables']);
    return null;
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    return e.code === 'ENOENT' ? 'nft is not installed' : `nft does not work here: ${e.message}`;
  }
}
