import { generateToken, hashToken, isWellFormedToken, tokenLast4 } from '@palisade/protocol';
import type { AccountRow, Database } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';
import {
  countAccessTokens,
  deleteAccessToken,
  findTokenAccount,
  insertAccessToken,
  listAccessTokens,
  touchAccessToken,
} from '../repositories/access-tokens.repository.js';
import type { ChangesService } from './changes.service.js';

export const MAX_TOKENS_PER_ACCOUNT = 100;

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

/** A token's `last_used_at` is written at most this often (it is shown to the minute). */
const TOUCH_EVERY_MS = 60_000;

export interface AccessTokensDeps {
  db: Database;
  clock: () => number;
  changes: Pick<ChangesService, 'changed' | 'onChange' | 'ready'>;
}

/**
 * Personal access tokens. `authenticate` keeps what it found in memory, by token hash: a revoked
 * token, a disabled account or any change to the account row is published by the writer and drops
 * the account's entries in every process (changes.service.ts explains how that is exact).
 */
export function createAccessTokensService({ db, clock, changes }: AccessTokensDeps) {
  const byHash = new Map<string, TokenLookup>();
  /** Each account's row, shared by its kept lookups, and their hashes. */
  const byAccount = new Map<number, { account: AccountRow; hashes: Set<string> }>();
  /** The objects kept in `byHash`, as opposed to ones read from the database for one request. */
  const keptLookups = new WeakSet<TokenLookup>();
  /** Bumped by every change: a lookup that began before one is not kept. */
  let generation = 0;
  const counts = { hits: 0, misses: 0 };
  changes.onChange((accountId) => {
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

  return {
    /**
     * Whether a lookup still holds once the request's rate-limit round trip is back: one from the
     * database does; one kept in memory only if this process has heard of every change up to now
     * (`caughtUp`) and its entry was not dropped meanwhile.
     */
    stillCurrent(lookup: TokenLookup, caughtUp: boolean): boolean {
      if (!keptLookups.has(lookup)) return true; // read from the database for this request
      return caughtUp && byHash.get(lookup.hash) === lookup;
    },

    /** Lookups answered from memory and from the database, for /metrics. */
    stats: () => ({ ...counts, size: byHash.size }),

    list: (accountId: number) => listAccessTokens(db, accountId),

    /** The raw token is in the answer once; only its SHA-256 and last 4 characters are kept. */
    async create(accountId: number, name: string) {
      if ((await countAccessTokens(db, accountId)) >= MAX_TOKENS_PER_ACCOUNT) {
        throw conflict(`an account can hold at most ${MAX_TOKENS_PER_ACCOUNT} tokens; revoke one first`);
      }
      const token = generateToken('personal');
      const row = await insertAccessToken(db, {
        account_id: accountId,
        name,
        token_hash: hashToken(token),
        last4: tokenLast4(token),
        created_at: clock(),
      });
      return { ...row, token };
    },

    async revoke(accountId: number, id: number) {
      if (!(await deleteAccessToken(db, accountId, id))) throw notFound('token');
      await changes.changed(accountId);
    },

    /**
     * The token's lookup when memory settles it without I/O (kept, usable now, its last use recorded
     * within the minute); otherwise undefined, and `authenticate` decides. Only well-formed tokens
     * are ever kept, so a hit needs no format check.
     */
    fromMemory(raw: string): TokenLookup | undefined {
      if (!changes.ready()) return undefined;
      const lookup = byHash.get(hashToken(raw));
      if (!lookup || lookup.lastUsedAt === null || lookup.lastUsedAt < clock() - TOUCH_EVERY_MS) return undefined;
      counts.hits += 1;
      return lookup;
    },

    /** The token and its account, or undefined for a malformed, unknown or revoked token or a disabled account. */
    async authenticate(raw: string): Promise<TokenLookup | undefined> {
      if (!isWellFormedToken('personal', raw)) return undefined;
      const hash = hashToken(raw);
      const usable = changes.ready();
      let lookup = usable ? byHash.get(hash) : undefined;
      if (lookup) counts.hits += 1;
      else {
        counts.misses += 1;
        const began = generation;
        const row = await findTokenAccount(db, hash);
        if (!row) return undefined;
        const { token_id: tokenId, last_used_at: lastUsedAt, ...account } = row;
        lookup = { tokenId, lastUsedAt, account, hash };
        if (usable && began === generation) {
          const kept = { ...lookup };
          keptLookups.add(kept);
          keep(kept);
        }
      }
      const now = clock();
      if (lookup.lastUsedAt === null || lookup.lastUsedAt < now - TOUCH_EVERY_MS) {
        await touchAccessToken(db, lookup.tokenId, now);
        lookup.lastUsedAt = now;
        const kept = byHash.get(hash);
        if (kept) kept.lastUsedAt = now;
      }
      return lookup;
    },
  };
}

export type AccessTokensService = ReturnType<typeof createAccessTokensService>;
