import { lookup } from 'node:dns/promises';
import { networkInterfaces } from 'node:os';
import { contains, type Network, readNetwork } from '@palisade/protocol/networks';
import type { ConsoleConfig } from '../../config.js';
import { specialUse } from './special-use.js';

/** How long the list is reused before it is read again (interfaces and the public URL's name can change). */
const REFRESH_MS = 60_000;

export interface OwnAddress {
  net: Network;
  /** Where the console has it: `public URL`, `listen address`, `interface eth0`. */
  what: string;
}

/**
 * The console's own addresses (docs/security.md, "Fleet entries and reported bans"): its public
 * URL's host (resolved when it is a name), the addresses it listens on (API and metrics), and every address of its
 * network interfaces (its listen address when that is 0.0.0.0 or ::, and what agents see its calls
 * come from). No fleet entry may cover one of them: an agent that blocked it would cut its server
 * off from the console.
 */
export function createOwnAddresses(
  config: Pick<ConsoleConfig, 'publicUrl' | 'host'> & Partial<Pick<ConsoleConfig, 'metricsAddr'>>,
) {
  let cached: { at: number; list: OwnAddress[] } | null = null;

  async function read(): Promise<OwnAddress[]> {
    const list: OwnAddress[] = [];
    const add = (text: string, what: string) => {
      const net = readNetwork(text.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
      if (net) list.push({ net, what });
    };
    if (config.publicUrl) {
      const host = new URL(config.publicUrl).hostname.replace(/^\[|\]$/g, '');
      if (readNetwork(host)) add(host, 'public URL');
      else {
        const resolved = await lookup(host, { all: true }).catch(() => []);
        for (const r of resolved) add(r.address, `public URL (${host})`);
      }
    }
    if (config.host) add(config.host, 'listen address');
    if (config.metricsAddr) add(config.metricsAddr.host, 'metrics listen address');
    for (const [name, addrs] of Object.entries(networkInterfaces()))
      for (const a of addrs ?? []) add(a.address, `interface ${name}`);
    return list.filter((o) => o.net.prefix === (o.net.family === 4 ? 32 : 128) && o.net.start !== 0n);
  }

  /** The addresses, read again at most once a minute. */
  async function list(): Promise<OwnAddress[]> {
    const now = Date.now();
    if (!cached || now - cached.at > REFRESH_MS) cached = { at: now, list: await read() };
    return cached.list;
  }

  /** The console's own address `net` covers, with where the console has it; null when none. */
  async function within(net: Network): Promise<OwnAddress | null> {
    return (await list()).find((o) => contains(net, o.net)) ?? null;
  }

  return {
    list,
    within,
    /** Why a blacklist entry must never reach an agent (one stored before these checks existed); null when it may. */
    async neverBlock(address: string): Promise<string | null> {
      const net = readNetwork(address);
      if (!net) return null;
      const special = specialUse(net);
      if (special) return `${net.text} covers ${special} addresses`;
      const mine = await within(net);
      return mine ? `${net.text} covers ${mine.net.text}, the console's own address (${mine.what})` : null;
    },
  };
}

export type OwnAddresses = ReturnType<typeof createOwnAddresses>;
