import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseAddress } from '../lib/net.js';

/**
 * Which SSH peers have logged in (docs/protection.md, "Never blocked"). A TCP connection to the SSH
 * port is not a session: a password guesser holds one through its tries. A peer counts as a session
 * when, besides being connected, it is in utmp (an interactive log-in) or sshd logged
 * `Accepted … for <user> from <ip>` for it (any log-in, commands and copies too) while it stayed
 * connected.
 */

/** glibc's `struct utmp` on Linux (x86-64 and the other 64-bit ABIs with 32-bit time fields): 384 bytes. */
const RECORD = 384;
const USER_PROCESS = 7;
const HOST_AT = 76;
const HOST_LENGTH = 256;
const ADDR_AT = 348;
/** utmp holds a few records a log-in; a file larger than this is not read whole. */
const UTMP_MAX_BYTES = 1 << 20;

/** The addresses of the interactive log-ins in a utmp file's bytes (USER_PROCESS records). */
export function utmpHosts(bytes: Buffer): Set<string> {
  const out = new Set<string>();
  for (let at = 0; at + RECORD <= bytes.length; at += RECORD) {
    if (bytes.readInt32LE(at) !== USER_PROCESS) continue;
    const addr = bytes.subarray(at + ADDR_AT, at + ADDR_AT + 16);
    let ip: string | null = null;
    if (addr.subarray(4).every((b) => b === 0)) {
      if (addr.readUInt32BE(0) !== 0) ip = [...addr.subarray(0, 4)].join('.');
    } else {
      const groups = Array.from({ length: 8 }, (_, i) => addr.readUInt16BE(2 * i).toString(16));
      ip = groups.join(':');
    }
    if (ip === null) {
      // No address recorded: the host field, when it is one.
      const host = bytes.subarray(at + HOST_AT, at + HOST_AT + HOST_LENGTH);
      const end = host.indexOf(0);
      ip = host.subarray(0, end === -1 ? HOST_LENGTH : end).toString('latin1');
    }
    const net = parseAddress(ip);
    if (net && !net.text.includes('/')) out.add(net.text);
  }
  return out;
}

/** The interactive log-ins' addresses on the host whose root is `root`; none when utmp cannot be read. */
export async function loggedInHosts(root: string): Promise<Set<string>> {
  try {
    const bytes = await readFile(join(root, 'run/utmp'));
    return utmpHosts(bytes.subarray(0, UTMP_MAX_BYTES));
  } catch {
    return new Set();
  }
}

/** sshd's line for a log-in: `Accepted password|publickey|keyboard-interactive/pam for <user> from <ip> port <n>`. */
const ACCEPTED = /\bAccepted [\w/-]+ for \S+ from (\S+) port \d+/;

/** The address an sshd log line says logged in, or null. */
export function acceptedFrom(line: string): string | null {
  const m = ACCEPTED.exec(line);
  if (!m) return null;
  const net = parseAddress(m[1]!);
  return net && !net.text.includes('/') ? net.text : null;
}
