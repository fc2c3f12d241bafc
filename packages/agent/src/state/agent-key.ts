import { statSync } from 'node:fs';
import { generateToken, hashToken, isWellFormedToken, safeEqual, tokenLast4 } from '../lib/tokens.js';
import { readJsonFile, writeFileAtomic } from './state-dir.js';

/** What is kept of the metrics key: its SHA-256, never the key itself. */
export interface StoredKey {
  sha256: string;
  last4: string;
  created_at: number;
}

/** Makes a new key, stores its hash (replacing any earlier one) and returns the raw key. */
export function rotateKey(file: string, now: number): { key: string; stored: StoredKey } {
  const key = generateToken('agentKey');
  const stored: StoredKey = { sha256: hashToken(key), last4: tokenLast4(key), created_at: now };
  writeFileAtomic(file, `${JSON.stringify(stored)}\n`);
  return { key, stored };
}

export function readStoredKey(file: string): StoredKey | null {
  const stored = readJsonFile<StoredKey>(file);
  if (stored && (typeof stored.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(stored.sha256))) {
    throw new Error(`${file} does not hold a key hash; run palisade-agent key to make a new key`);
  }
  return stored;
}

/**
 * The key check of the running daemon. The key file is stat'ed on every check (a few
 * microseconds), so a key rotated by `palisade-agent key` takes effect on the very next request.
 */
export class KeyCheck {
  private stored: StoredKey | null = null;
  private signature = '';

  constructor(private readonly file: string) {
    this.refresh();
  }

  current(): StoredKey | null {
    this.refresh();
    return this.stored;
  }

  /** True when `presented` is the current key. Compares hashes in constant time. */
  matches(presented: string): boolean {
    this.refresh();
    if (!this.stored || !isWellFormedToken('agentKey', presented)) return false;
    return safeEqual(hashToken(presented), this.stored.sha256);
  }

  private refresh() {
    let signature: string;
    try {
      const s = statSync(this.file, { bigint: true });
      signature = `${s.ino}:${s.mtimeNs}:${s.ctimeNs}:${s.size}`;
    } catch {
      signature = 'missing';
    }
    if (signature === this.signature) return;
    this.signature = signature;
    try {
      this.stored = signature === 'missing' ? null : readStoredKey(this.file);
    } catch {
      this.stored = null; // an unreadable key file lets nobody in
    }
  }
}
