import { generateToken, hashToken, isWellFormedToken, tokenLast4 } from '@palisade/protocol';
import type { Database } from '../db/schema.js';
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

type TokenAccount = NonNullable<Awaited<ReturnType<typeof findTokenAccount>>>;

/** Token lookups kept in memory; past this many the oldest half goes. */
const MAX_CACHED_TOKENS = 10_000;

export interface AccessTokensDeps {
  db: Database;
  clock: () => number;
  changes: Pick<ChangesService, 'changed' | 'onChange' | 'ready'>;
}

/**
 * Personal access tokens. `authenticate` keeps what it found in memory, by token hash: a revoked
 * token, a disabled account or any change to the account row is published by the writer
 * (changes.service.ts) and drops the account's entries in every process before the writer answers.
 */
export function createAccessTokensService({ db, clock, changes }: AccessTokensDeps) {
  const cache = new Map<string, TokenAccount>();
  /** The hash of each lookup kept in `cache`. */
  const hashes = new WeakMap<TokenAccount, string>();
  /** Bumped by every change: a lookup that began before one is not kept. */
  let generation = 0;
  const counts = { hits: 0, misses: 0 };
  changes.onChange((accountId) => {
    generation += 1;
    if (accountId === null) cache.clear();
    else for (const [hash, found] of cache) if (found.id === accountId) cache.delete(hash);
  });

  function keep(hash: string, found: TokenAccount) {
    if (cache.size >= MAX_CACHED_TOKENS) {
      let drop = cache.size / 2;
      for (const key of cache.keys()) {
        if (drop-- <= 0) break;
        cache.delete(key);
      }
    }
    cache.set(hash, found);
    hashes.set(found, hash);
  }

  return {
    /**
     * Whether a lookup still holds once the request's rate-limit round trip is back: one from the
     * database does; one kept in memory only if this process has heard of every change up to now
     * (`caughtUp`) and its entry was not dropped meanwhile.
     */
    stillCurrent(found: TokenAccount, caughtUp: boolean): boolean {
      const hash = hashes.get(found);
      return hash === undefined || (caughtUp && cache.get(hash) === found);
    },

    /** Lookups answered from memory and from the database, for /metrics. */
    stats: () => ({ ...counts, size: cache.size }),

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

    /** The token's account, or undefined for a malformed, unknown or revoked token or a disabled account. */
    async authenticate(raw: string): Promise<TokenAccount | undefined> {
      if (!isWellFormedToken('personal', raw)) return undefined;
      const hash = hashToken(raw);
      const usable = changes.ready();
      let found = usable ? cache.get(hash) : undefined;
      if (found) counts.hits += 1;
      else {
        counts.misses += 1;
        const began = generation;
        found = await findTokenAccount(db, hash);
        if (!found) return undefined;
        if (usable && began === generation) keep(hash, found);
      }
      const now = clock();
      if (found.last_used_at === null || found.last_used_at < now - 60_000) {
        await touchAccessToken(db, found.token_id, now);
        found.last_used_at = now;
      }
      return found;
    },
  };
}

export type AccessTokensService = ReturnType<typeof createAccessTokensService>;
