import type { Actor } from '../../db/schema.js';
import type { Coherence } from './index.js';

/** A token found, with its person (enabled) as a member of the token's team. */
export interface TokenLookup {
  tokenId: number;
  lastUsedAt: number | null;
  account: Actor;
  /** The token's SHA-256, the key it is kept under. */
  hash: string;
}

/** Token lookups kept in memory (each about 100 bytes and its actor); past this many all go. */
const MAX_CACHED_TOKENS = 100_000;

/**
 * Token → actor lookups kept in memory by token hash, guarded by the coherence module (index.ts):
 * a revoked token, a disabled person, a membership removed or changed, or any change to the person's
 * row is published by its writer for the team (every team of the person) as an `access` change and
 * drops the team's entries in every process; `data` changes (check-ins, servers) leave them.
 */
export function createTokenCache(
  coherence: Pick<Coherence, 'onChange' | 'ready' | 'caughtUp' | 'caughtUpWith' | 'counterInDatabase'>,
) {
  const byHash = new Map<string, TokenLookup>();
  /** Each team's kept lookups, by hash. */
  const byAccount = new Map<number, { hashes: Set<string> }>();
  /** Bumped by every access change: a lookup read from the database while one happened is not kept. */
  let generation = 0;
  const counts = { hits: 0, misses: 0 };
  coherence.onChange((accountId, kind) => {
    // A check-in or a server's settings change what the account owns, not what its tokens resolve to.
    if (kind === 'data') return;
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
    if (!entry) {
      entry = { hashes: new Set() };
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
     * during that read. Otherwise `lookupFromDb` answers. With `changeOf`, when the counter is in
     * the database and `alongside`'s statement read it (the rate-limit count, started after this
     * call), that reading is the counter read: one round trip instead of two.
     */
    async read<T>(
      hash: string,
      lookupFromDb: () => Promise<TokenLookup | undefined>,
      alongside: (tokenId: number) => Promise<T>,
      changeOf?: (also: T) => number | undefined,
    ): Promise<{ lookup: TokenLookup; also: T } | undefined> {
      const early = changeOf && coherence.counterInDatabase ? byHash.get(hash) : undefined;
      if (early) {
        const also = await alongside(early.tokenId);
        const change = changeOf!(also);
        // Without a reading, a counter read made now: it too starts after the request arrived.
        const current = change === undefined ? await coherence.caughtUp() : coherence.caughtUpWith(change);
        if (current && byHash.get(hash) === early) {
          counts.hits += 1;
          return { lookup: early, also };
        }
        const lookup = await load(lookupFromDb, coherence.ready());
        return lookup && { lookup, also };
      }
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
