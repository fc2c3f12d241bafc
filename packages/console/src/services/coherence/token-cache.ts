import type { AccountRow } from '../../db/schema.js';
import type { Coherence } from './index.js';

/** A token found, with its account (enabled). */
export interface TokenLookup {
  tokenId: number;
  lastUsedAt: number | null;
  account: AccountRow;
  /** The token's SHA-256, the key it is kept under. */
  hash: string;
}

/** Token lookups kept in memory (each about 100 bytes; one account row per account); past this many all go. */
const MAX_CACHED_TOKENS = 100_000;

/**
 * Token → account lookups kept in memory by token hash, guarded by the coherence module (index.ts):
 * a revoked token, a disabled account or any change to the account row is published by its writer
 * and drops the account's entries in every process.
 */
export function createTokenCache(coherence: Pick<Coherence, 'onChange' | 'ready' | 'caughtUp'>) {
  const byHash = new Map<string, TokenLookup>();
  /** Each account's row, shared by its kept lookups, and their hashes. */
  const byAccount = new Map<number, { account: AccountRow; hashes: Set<string> }>();
  /** Bumped by every change: a lookup read from the database while one happened is not kept. */
  let generation = 0;
  const counts = { hits: 0, misses: 0 };
  coherence.onChange((accountId) => {
    generation += 1;
    if (accountId === null) {
      byHash.clear();
      byAccount.clear();
      return;
    }
    for (const hash of byAccount.get(accountId)?.hashes ?? []) byHash.delete(hash);
    byAccount.delete(accountId);
  });

  function keep(lookup: TokenLookup) {
    if (byHash.size >= MAX_CACHED_TOKENS) {
      byHash.clear();
      byAccount.clear();
    }
    let entry = byAccount.get(lookup.account.id);
    if (entry) lookup.account = entry.account;
    else {
      entry = { account: lookup.account, hashes: new Set() };
      byAccount.set(lookup.account.id, entry);
    }
    entry.hashes.add(lookup.hash);
    byHash.set(lookup.hash, lookup);
  }

  /** From the database; kept when this process was caught up and heard of no change while it read. */
  async function load(lookupFromDb: () => Promise<TokenLookup | undefined>, caughtUp: boolean | Promise<boolean>) {
    counts.misses += 1;
    const began = generation;
    const [current, lookup] = await Promise.all([caughtUp, lookupFromDb()]);
    if (lookup && current && began === generation) keep(lookup);
    return lookup;
  }

  return {
    /**
     * The kept lookup when memory settles it now, without I/O (`ready()`: SQLite, one process) and
     * it was last used since `usedSince`; otherwise undefined, and `read` decides.
     */
    now(hash: string, usedSince: number): TokenLookup | undefined {
      if (!coherence.ready()) return undefined;
      const lookup = byHash.get(hash);
      if (!lookup || lookup.lastUsedAt === null || lookup.lastUsedAt < usedSince) return undefined;
      counts.hits += 1;
      return lookup;
    },

    /**
     * The token's lookup as of this call, and what `alongside` answers for its id. A kept lookup is
     * used once the change counter, read after this call, shows that no change can be missing here
     * and its entry was not dropped meanwhile; `alongside` (the request's rate-limit count) runs
     * during that read. Otherwise `lookupFromDb` answers.
     */
    async read<T>(
      hash: string,
      lookupFromDb: () => Promise<TokenLookup | undefined>,
      alongside: (tokenId: number) => Promise<T>,
    ): Promise<{ lookup: TokenLookup; also: T } | undefined> {
      const caughtUp = coherence.caughtUp();
      const kept = byHash.get(hash);
      if (kept) {
        const [current, also] = await Promise.all([caughtUp, alongside(kept.tokenId)]);
        if (current && byHash.get(hash) === kept) {
          counts.hits += 1;
          return { lookup: kept, also };
        }
        // The same hash is the same token: what was counted stands.
        const lookup = await load(lookupFromDb, coherence.ready());
        return lookup && { lookup, also };
      }
      const lookup = await load(lookupFromDb, caughtUp);
      return lookup && { lookup, also: await alongside(lookup.tokenId) };
    },

    /** Lookups answered from memory and from the database, for /metrics. */
    stats: () => ({ ...counts, size: byHash.size }),
  };
}
