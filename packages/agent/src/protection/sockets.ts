// Per-source connection counts from the kernel's socket tables (/proc/net/tcp and tcp6).
import { parseAddress } from '../lib/net.js';

export interface SourceCounts {
  established: number;
  synRecv: number;
}

export interface SocketTable {
  /** Remote address → incoming connections to a listening port. */
  sources: Map<string, SourceCounts>;
  /** Remote addresses with an established session to one of the SSH ports. */
  sshPeers: Set<string>;
}

const ESTABLISHED = '01';
const SYN_RECV = '03';
const LISTEN = '0A';

/** `0100007F:1F90` (v4) or 32 hex digits (v6), each 32-bit word in host (little-endian) order. */
export function decodeAddress(hex: string): { ip: string; port: number } | null {
  const [addr, port] = hex.split(':');
  if (!addr || !port) return null;
  const bytes: number[] = [];
  for (let w = 0; w < addr.length; w += 8) {
    const word = addr.slice(w, w + 8);
    for (let b = 6; b >= 0; b -= 2) bytes.push(Number.parseInt(word.slice(b, b + 2), 16));
  }
  let ip: string;
  if (bytes.length === 4) ip = bytes.join('.');
  else {
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) groups.push(((bytes[i]! << 8) | bytes[i + 1]!).toString(16));
    ip = groups.join(':');
  }
  const parsed = parseAddress(ip);
  return parsed ? { ip: parsed.text, port: Number.parseInt(port, 16) } : null;
}

/** Counts incoming connections per source from the text of /proc/net/tcp and /proc/net/tcp6. */
export function countSockets(texts: string[], sshPorts: number[]): SocketTable {
  const rows: { local: string; remote: string; state: string }[] = [];
  const listening = new Set<number>();
  for (const text of texts) {
    const lines = text.split('\n');
    for (let i = 1; i < lines.length; i++) {
      const f = lines[i]!.trim().split(/\s+/);
      if (f.length < 4) continue;
      const [, local, remote, state] = f as [string, string, string, string];
      if (state === LISTEN) {
        const port = Number.parseInt(local.split(':')[1] ?? '', 16);
        if (Number.isFinite(port)) listening.add(port);
      } else if (state === ESTABLISHED || state === SYN_RECV) rows.push({ local, remote, state });
    }
  }
  const sources = new Map<string, SourceCounts>();
  const sshPeers = new Set<string>();
  for (const row of rows) {
    const localPort = Number.parseInt(row.local.split(':')[1] ?? '', 16);
    // Only connections to a port this host listens on are incoming; the rest are its own outgoing ones.
    if (!listening.has(localPort) && row.state !== SYN_RECV) continue;
    const remote = decodeAddress(row.remote);
    if (!remote) continue;
    let c = sources.get(remote.ip);
    if (!c) {
      c = { established: 0, synRecv: 0 };
      sources.set(remote.ip, c);
    }
    if (row.state === ESTABLISHED) {
      c.established++;
      if (sshPorts.includes(localPort)) sshPeers.add(remote.ip);
    } else c.synRecv++;
  }
  return { sources, sshPeers };
}
