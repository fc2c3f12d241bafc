import { generateToken, hashToken, isWellFormedToken, tokenLast4 } from '@palisade/protocol';
import type { Database } from '../db/schema.js';
import { conflict, notFound } from '../errors.js';
import {
  countAccessTokens,
  deleteAccessToken,
  findTokenAccount,
  insertAccessToken,
  listAccessTokens,
  touchAccessTokens,
} from '../repositories/access-tokens.repository.js';
import { actorOf } from './accounts.service.js';
import { createBatchLoader } from './batch-loader.js';
import type { Coherence } from './coherence/index.js';
import { createTokenCache, type TokenLookup } from './coherence/token-cache.js';

export const MAX_TOKENS_PER_ACCOUNT = 100;

/** A token's `last_used_at` is written at most this often (it is shown to the minute). */
const TOUCH_EVERY_MS = 60_000;

export interface AccessTokensDeps {
  db: Database;
  clock: () => number;
  coherence: Pick<Coherence, 'changed' | 'onChange' | 'ready' | 'caughtUp' | 'caughtUpWith' | 'counterInDatabase'>;
}

/**
 * Personal access tokens. Lookups are kept in memory by token hash (coherence/token-cache.ts); a
 * revocation is told to the coherence module, which drops the account's entries in every process.
 */
export function createAccessTokensService({ db, clock, coherence }: AccessTokensDeps) {
  const cache = createTokenCache(coherence);
  // The uses to record in one turn of the event loop, one UPDATE for them all: with thousands of
  // tokens in use, one a request past each token's minute was a write per request
  // (docs/performance.md, "Thousands of tokens").
  const touch = createBatchLoader<number, true>(async (ids) => {
    await touchAccessTokens(db, ids, clock());
    return new Map(ids.map((id) => [id, true]));
  });
  /** Uses being recorded: a token's requests while its write is out wait for that write. */
  const touching = new Map<number, Promise<unknown>>();
  function touchOnce(tokenId: number) {
    let written = touching.get(tokenId);
    if (!written) {
      written = touch(tokenId).finally(() => touching.delete(tokenId));
      touching.set(tokenId, written);
    }
    return written;
  }

  async function fromDatabase(hash: string): Promise<TokenLookup | undefined> {
    const row = await findTokenAccount(db, hash);
    if (!row) return undefined;
    const { token_id: tokenId, last_used_at: lastUsedAt, ...actor } = row;
    return { tokenId, lastUsedAt, account: actorOf(actor), hash };
  }

  return {
    /** Lookups answered from memory and from the database, for /metrics. */
    stats: () => cache.stats(),

    list: (accountId: number, personId: number) => listAccessTokens(db, accountId, personId),

    /** The raw token is in the answer once; only its SHA-256 and last 4 characters are kept. */
    async create(accountId: number, personId: number, name: string) {
      if ((await countAccessTokens(db, accountId, personId)) >= MAX_TOKENS_PER_ACCOUNT) {
        throw conflict(`an account can hold at most ${MAX_TOKENS_PER_ACCOUNT} tokens; revoke one first`);
      }
      const token = generateToken('personal');
      const row = await insertAccessToken(db, {
        account_id: accountId,
        person_id: personId,
        name,
        token_hash: hashToken(token),
        last4: tokenLast4(token),
        created_at: clock(),
      });
      return { ...row, token };
    },

    async revoke(accountId: number, personId: number, id: number) {
      if (!(await deleteAccessToken(db, accountId, personId, id))) throw notFound('token');
      await coherence.changed(accountId);
    },

    /**
     * The token's lookup when memory settles it without I/O (kept, usable now, its last use recorded
     * within the minute); otherwise undefined, and `authenticate` decides. Only well-formed tokens
     * are ever kept, so a hit needs no format check.
     */
    fromMemory: (raw: string): TokenLookup | undefined => cache.now(hashToken(raw), clock() - TOUCH_EVERY_MS),

    /**
     * The token and its account, or undefined for a malformed, unknown or revoked token or a
     * disabled account, as of this call; with what `alongside` (the request's rate-limit count)
     * answers for the token's id, run while a lookup kept in memory is confirmed; `changeOf` finds
     * in that answer the shared change counter when its statement read it (token-cache.ts, `read`).
     */
    async authenticate<T>(
      raw: string,
      alongside: (tokenId: number) => Promise<T>,
      changeOf?: (also: T) => number | undefined,
    ) {
      if (!isWellFormedToken('personal', raw)) return undefined;
      const hash = hashToken(raw);
      const found = await cache.read(hash, () => fromDatabase(hash), alongside, changeOf);
      if (!found) return undefined;
      const { lookup } = found;
      const now = clock();
      if (lookup.lastUsedAt === null || lookup.lastUsedAt < now - TOUCH_EVERY_MS) {
        await touchOnce(lookup.tokenId);
        lookup.lastUsedAt = now;
      }
      return found;
    },
  };
}

export type AccessTokensService = ReturnType<typeof createAccessTokensService>;
