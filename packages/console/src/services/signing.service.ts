import {
  generateToken,
  hashToken,
  isWellFormedToken,
  SVC1_HEADERS,
  SVC1_VERSION,
  SVC1_WINDOW_S,
  type Svc1Reason,
  tokenLast4,
  verifySignature,
} from '@palisade/protocol';
import type { Actor, Database } from '../db/schema.js';
import { AppError, conflict, notFound } from '../errors.js';
import {
  countSigningKeys,
  deleteNoncesBefore,
  deleteSigningKey,
  findSigningKey,
  insertSigningKey,
  listSigningKeys,
  recordNonce,
  recordSignature,
  touchSigningKey,
} from '../repositories/signing-keys.repository.js';
import { findMember } from '../repositories/team-members.repository.js';
import { actorOf } from './accounts.service.js';
import type { SecurityEventsService } from './security-events.service.js';

export const MAX_KEYS_PER_ACCOUNT = 100;

export interface SignedRequest {
  method: string;
  /** Path without query string. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The exact bytes received, before any parsing. */
  rawBody: Buffer | undefined;
  ip: string;
}

const MESSAGES: Record<Svc1Reason, string> = {
  missing: 'signed request is missing a required X-SVC header',
  bad_version: 'unsupported X-SVC-Signature-Version: only 1 is accepted',
  stale: 'signed request timestamp is more than 300 s in the past: check the client clock',
  future: 'signed request timestamp is more than 300 s in the future: check the client clock',
  bad_signature: 'signature does not match: sign the exact bytes sent with a valid key',
  replay: 'this timestamp and nonce were already used: send a fresh nonce with each request',
};

const REPLAYED_WRITE =
  'this signed write was already accepted: a write is signed afresh for each request (a new timestamp or body)';

/** Writes whose signature is refused a second time; reads stay repeatable (docs/signing.md, "Replay"). */
const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

function header(headers: SignedRequest['headers'], name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? undefined : value;
}

export function createSigningService({
  db,
  clock,
  events,
}: {
  db: Database;
  clock: () => number;
  events: SecurityEventsService;
}) {
  async function fail(
    req: SignedRequest,
    reason: Svc1Reason,
    accountId: number | null,
    message = MESSAGES[reason],
  ): Promise<never> {
    const key = header(req.headers, SVC1_HEADERS.key);
    await events.record({
      account_id: accountId,
      kind: 'signed_request_failed',
      reason,
      key_last4: key ? tokenLast4(key) : null,
      method: req.method,
      path: req.path,
      ip: req.ip,
    });
    throw new AppError(401, message, { code: 'signature_refused', reason });
  }

  /** The key's row and account, when the header holds a key that exists. */
  function resolveKey(key: string | undefined) {
    return key && isWellFormedToken('signingKey', key)
      ? findSigningKey(db, hashToken(key))
      : Promise.resolve(undefined);
  }

  return {
    list: (accountId: number, personId: number) => listSigningKeys(db, accountId, personId),

    async create(accountId: number, personId: number, name: string) {
      if ((await countSigningKeys(db, accountId, personId)) >= MAX_KEYS_PER_ACCOUNT) {
        throw conflict(`an account can hold at most ${MAX_KEYS_PER_ACCOUNT} signing keys; revoke one first`);
      }
      const key = generateToken('signingKey');
      const row = await insertSigningKey(db, {
        account_id: accountId,
        person_id: personId,
        name,
        key_hash: hashToken(key),
        last4: tokenLast4(key),
        created_at: clock(),
      });
      return { ...row, key };
    },

    async revoke(accountId: number, personId: number, id: number) {
      if (!(await deleteSigningKey(db, accountId, personId, id))) throw notFound('key');
    },

    /** A route that does not accept signed requests refuses them outright. */
    async refuseUnsupported(req: SignedRequest): Promise<never> {
      const found = await resolveKey(header(req.headers, SVC1_HEADERS.key));
      return fail(req, 'bad_signature', found?.account_id ?? null, 'this route does not accept signed requests');
    },

    /**
     * SVC1 verification in the order docs/signing.md ("Failures") gives: missing → bad_version → stale/future →
     * bad_signature → replay (the nonce is recorded only after the signature verified). The key is
     * looked up first so that every failure with a known key reaches that account's event stream.
     */
    async verify(req: SignedRequest): Promise<Actor> {
      const key = header(req.headers, SVC1_HEADERS.key);
      const timestamp = header(req.headers, SVC1_HEADERS.timestamp);
      const version = header(req.headers, SVC1_HEADERS.version);
      const signature = header(req.headers, SVC1_HEADERS.signature);
      const nonce = header(req.headers, SVC1_HEADERS.nonce);
      const found = await resolveKey(key);
      const accountId = found?.account_id ?? null;
      if (!key || !timestamp || !version || !signature || !nonce) return fail(req, 'missing', accountId);
      if (version !== SVC1_VERSION) return fail(req, 'bad_version', accountId);
      if (!/^[0-9]{1,12}$/.test(timestamp))
        return fail(req, 'missing', accountId, 'X-SVC-Timestamp must be Unix seconds');
      if (nonce.length > 128) return fail(req, 'missing', accountId, 'X-SVC-Nonce must be at most 128 characters');
      const ts = Number(timestamp);
      const nowS = Math.floor(clock() / 1000);
      if (ts < nowS - SVC1_WINDOW_S) return fail(req, 'stale', accountId);
      if (ts > nowS + SVC1_WINDOW_S) return fail(req, 'future', accountId);

      // The exact bytes received; an empty body may also be signed with an empty fourth line.
      const matches = verifySignature({
        key,
        signature,
        timestamp,
        method: req.method,
        path: req.path,
        body: req.rawBody ?? '',
      });
      if (!found || !matches) return fail(req, 'bad_signature', accountId);
      // The key acts as its person in its team, with their role there (docs/teams.md).
      const member = await findMember(db, found.account_id, found.person_id);
      if (!member) return fail(req, 'bad_signature', accountId, 'the key belongs to a person no longer in the team');
      if (member.disabled_at !== null)
        return fail(req, 'bad_signature', accountId, 'the key belongs to a disabled account');
      if (!(await recordNonce(db, found.key_id, ts, nonce, clock()))) return fail(req, 'replay', accountId);
      // The payload does not cover the nonce: a captured write re-sent with a new nonce is the same signature.
      if (WRITES.has(req.method) && !(await recordSignature(db, found.key_id, signature, clock())))
        return fail(req, 'replay', accountId, REPLAYED_WRITE);

      const now = clock();
      if (found.key_last_used_at === null || found.key_last_used_at < now - 60_000)
        await touchSigningKey(db, found.key_id, now);
      return actorOf(member);
    },

    /** Nonces and signatures older than twice the window can never be replayed (their timestamps are stale). */
    expireNonces: () => deleteNoncesBefore(db, clock() - 2 * SVC1_WINDOW_S * 1000),
  };
}

export type SigningService = ReturnType<typeof createSigningService>;
