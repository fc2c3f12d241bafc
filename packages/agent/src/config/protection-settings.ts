// The protection keys of the config file (`protection.*`, `autofetch.feeds`), parsed here and
// merged into the agent's one config parser.

import { MAX_TTL_S, PROTECTED_SERVICES, type ProtectedService } from '@palisade/protocol/control-schemas/standalone';

/** A blocklist feed from `autofetch.feeds`. */
export interface FeedDefinition {
  name: string;
  url: string;
}

export interface ProtectionSettings {
  backend: 'auto' | 'nftables' | 'monitor';
  /** Established connections from one source that make a connection flood. */
  connLimit: number;
  /** Half-open (SYN_RECV) connections from one source that make a SYN flood. */
  synLimit: number;
  checkIntervalMs: number;
  /** First ban of an attacker; each repeat doubles it up to banMaxS. */
  banS: number;
  banMaxS: number;
  /** Banned attackers in one /24 (v4) or /64 (v6) that get the whole prefix banned; 0 = never. */
  prefixBanAt: number;
  reconcileS: number;
  sshPorts: number[];
  /** Traffic above the baseline's median + factor × spread (and above minPps) counts as excess. */
  trafficFactor: number;
  trafficMinPps: number;
  /** Seconds of normal readings that end an attack. */
  attackEndS: number;
  feeds: FeedDefinition[];
  /**
   * `protection.protect`: the services whose shipped patterns the agent enables once (`auto`: every
   * one found on the host); null when unset (docs/protection.md, "Services found on the host").
   */
  protect: ProtectSetting;
}

export type ProtectSetting = 'auto' | ProtectedService[] | null;

export const DEFAULT_FEEDS: FeedDefinition[] = [
  { name: 'firehol_level1', url: 'https://iplists.firehol.org/files/firehol_level1.netset' },
  { name: 'spamhaus_drop', url: 'https://www.spamhaus.org/drop/drop.txt' },
];

export function defaultProtectionSettings(): ProtectionSettings {
  return {
    backend: 'auto',
    connLimit: 100,
    synLimit: 30,
    checkIntervalMs: 1000,
    banS: 600,
    banMaxS: 7 * 86400,
    prefixBanAt: 8,
    reconcileS: 30,
    sshPorts: [22],
    trafficFactor: 6,
    trafficMinPps: 5000,
    attackEndS: 10,
    feeds: DEFAULT_FEEDS.map((f) => ({ ...f })),
    protect: null,
  };
}

function whole(min: number, max: number, raw: string): number {
  if (!/^\d+$/.test(raw)) throw new Error(`expected a whole number from ${min} to ${max}`);
  const n = Number(raw);
  if (n < min || n > max) throw new Error(`expected a whole number from ${min} to ${max}`);
  return n;
}

/** `name=url, name=url`; names are letters, digits, `_` and `-`. */
export function parseFeeds(raw: string): FeedDefinition[] {
  if (raw.trim() === '') return [];
  const seen = new Set<string>();
  return raw.split(/[\s,]+/).map((item) => {
    const m = /^([A-Za-z0-9_-]{1,40})=(\S+)$/.exec(item);
    if (!m) throw new Error(`expected name=url items, got "${item.slice(0, 60)}"`);
    const url = new URL(m[2]!);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`feed ${m[1]}: expected an http(s) URL`);
    if (seen.has(m[1]!)) throw new Error(`feed ${m[1]} is named twice`);
    seen.add(m[1]!);
    return { name: m[1]!, url: url.toString() };
  });
}

const PROTECT_EXPECTED = `expected auto or service names from ${PROTECTED_SERVICES.join(', ')} (e.g. sshd,nginx)`;

/** `auto`, or service names separated by commas or spaces (each once, in PROTECTED_SERVICES's order); empty is unset. */
export function parseProtect(raw: string): ProtectSetting {
  const items = raw.split(/[\s,]+/).filter((s) => s !== '');
  if (items.length === 0) return null;
  if (items.includes('auto')) {
    if (items.length === 1) return 'auto';
    throw new Error(`auto stands alone: ${PROTECT_EXPECTED}`);
  }
  for (const item of items)
    if (!(PROTECTED_SERVICES as readonly string[]).includes(item))
      throw new Error(`unknown service "${item.slice(0, 40)}": ${PROTECT_EXPECTED}`);
  return PROTECTED_SERVICES.filter((s) => items.includes(s));
}

type Setter = (c: { protection: ProtectionSettings }, raw: string) => void;

export const PROTECTION_SETTERS: Record<string, Setter> = {
  'protection.conn_limit': (c, raw) => {
    c.protection.connLimit = whole(2, 1_000_000, raw);
  },
  'protection.syn_limit': (c, raw) => {
    c.protection.synLimit = whole(2, 1_000_000, raw);
  },
  'protection.check_interval_ms': (c, raw) => {
    c.protection.checkIntervalMs = whole(100, 10_000, raw);
  },
  'protection.ban_s': (c, raw) => {
    c.protection.banS = whole(1, 365 * 86400, raw);
  },
  'protection.ban_max_s': (c, raw) => {
    // Up to ten years is still read (older configs), but no ban lasts longer than MAX_TTL_S (three
    // years): nftables refuses longer element timeouts (docs/protection.md, "Ban lengths").
    c.protection.banMaxS = Math.min(whole(1, 10 * 365 * 86400, raw), MAX_TTL_S);
  },
  'protection.prefix_ban_at': (c, raw) => {
    c.protection.prefixBanAt = whole(0, 65536, raw);
  },
  'protection.reconcile_s': (c, raw) => {
    c.protection.reconcileS = whole(1, 86400, raw);
  },
  'protection.ssh_ports': (c, raw) => {
    c.protection.sshPorts = raw
      .split(/[\s,]+/)
      .filter((p) => p !== '')
      .map((p) => whole(1, 65535, p));
  },
  'protection.traffic_factor': (c, raw) => {
    if (!/^\d+(\.\d+)?$/.test(raw) || Number(raw) < 1 || Number(raw) > 1000)
      throw new Error('expected a number from 1 to 1000');
    c.protection.trafficFactor = Number(raw);
  },
  'protection.traffic_min_pps': (c, raw) => {
    c.protection.trafficMinPps = whole(0, 1_000_000_000, raw);
  },
  'protection.attack_end_s': (c, raw) => {
    c.protection.attackEndS = whole(1, 3600, raw);
  },
  'protection.protect': (c, raw) => {
    c.protection.protect = parseProtect(raw);
  },
  'autofetch.feeds': (c, raw) => {
    c.protection.feeds = parseFeeds(raw);
  },
};
