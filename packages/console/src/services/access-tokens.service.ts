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

export const MAX_TOKENS_PER_ACCOUNT = 100;

export function createAccessTokensService({ db, clock }: { db: Database; clock: () => number }) {
  return {
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
    },

    /** The token's account, or undefined for a malformed, unknown or revoked token or a disabled account. */
    async authenticate(raw: string) {
      if (!isWellFormedToken('personal', raw)) return undefined;
      const found = await findTokenAccount(db, hashToken(raw));
      if (!found) return undefined;
      const now = clock();
      if (found.last_used_at === null || found.last_used_at < now - 60_000)
        await touchAccessToken(db, found.token_id, now);
      return found;
    },
  };
}

export type AccessTokensService = ReturnType<typeof createAccessTokensService>;
