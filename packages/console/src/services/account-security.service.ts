import { createHash, randomBytes, randomInt } from 'node:crypto';
import type { AccountSession, TwoFactorChallenge, TwoFactorStatus } from '@palisade/protocol';
import { matchTotp, newTotpSecret, totpUri } from '@palisade/protocol/totp';
import type { ConsoleConfig } from '../config.js';
import type { Database, PersonRow } from '../db/schema.js';
import { AppError, conflict, forbidden, notFound, unauthorized } from '../errors.js';
import { deletePersonAndSoleTeams, findPersonById, setPersonPassword } from '../repositories/people.repository.js';
import { recentTwoFactorFailures } from '../repositories/security-events.repository.js';
import {
  deleteOtherSessions,
  deletePersonSession,
  findSessionStartedAt,
  listPersonSessions,
} from '../repositories/sessions.repository.js';
import { listPersonTeamIds } from '../repositories/team-members.repository.js';
import {
  claimTotpStep,
  countChallengeFailure,
  countUnusedRecoveryCodes,
  deleteLoginChallenge,
  deletePersonLoginChallenges,
  disableTotp,
  enableTotp,
  findLoginChallenge,
  insertLoginChallenge,
  setPendingTotp,
  useRecoveryCode,
} from '../repositories/two-factor.repository.js';
import type { SecretBox } from '../secrets.js';
import { sessionHash, signInOf } from './accounts.service.js';
import type { Coherence } from './coherence/index.js';
import { hashPassword, verifyPassword } from './passwords.js';
import type { SecurityEventsService } from './security-events.service.js';
import { deviceInWords } from './user-agent.js';

/** How long a sign-in waits for its two-factor code, and how many wrong codes it takes. */
export const CHALLENGE_TTL_MS = 5 * 60_000;
export const CHALLENGE_MAX_FAILURES = 5;
export const RECOVERY_CODE_COUNT = 10;
/** This many wrong codes on one account within TWO_FACTOR_LOCK_MS lock its code checks for TWO_FACTOR_LOCK_MS. */
export const TWO_FACTOR_LOCK_AFTER = 10;
export const TWO_FACTOR_LOCK_MS = 15 * 60_000;
/** A person without a password closes their account within this time of signing in through the provider. */
export const FRESH_SIGN_IN_MS = 10 * 60_000;
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789'; // no 0/o, 1/l/i to misread

/** The request a security event is recorded for. */
export interface RequestContext {
  method: string;
  path: string;
  ip: string;
}

/** What proves it is the account's owner: the password, and a code when two-factor sign-in is on. */
export interface Proof {
  password?: string | undefined;
  code?: string | undefined;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const normalizeRecoveryCode = (code: string) => code.toLowerCase().replace(/[\s-]/g, '');

/** `xxxxx-xxxxx` from a 31-letter alphabet: about 50 bits, stored as SHA-256 and tried under the login limit. */
function newRecoveryCode(): string {
  let code = '';
  for (let i = 0; i < 10; i += 1) code += RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

export interface AccountSecurityDeps {
  db: Database;
  clock: () => number;
  secrets: SecretBox;
  events: SecurityEventsService;
  /** Cached token lookups hold the account row: every change to it is published (services/coherence/). */
  changes: Pick<Coherence, 'changed'>;
  config: Pick<ConsoleConfig, 'passwordCost' | 'oidc'>;
}

/** Password change, sessions, two-factor sign-in and account deletion (docs/security.md, "Account security"). */
export function createAccountSecurityService({ db, clock, secrets, events, changes, config }: AccountSecurityDeps) {
  /** A cached token lookup holds the person's row: told for every team they are in (services/coherence/). */
  async function personChanged(personId: number, teams?: readonly number[]) {
    for (const teamId of teams ?? (await listPersonTeamIds(db, personId))) await changes.changed(teamId);
  }
  const record = (
    account: PersonRow,
    kind: Parameters<SecurityEventsService['record']>[0]['kind'],
    reason: string,
    ctx: RequestContext,
  ) => events.record({ account_id: null, person_id: account.id, kind, reason, ...ctx });

  /**
   * When the account's code checks are locked: TWO_FACTOR_LOCK_AFTER wrong codes within
   * TWO_FACTOR_LOCK_MS lock them until TWO_FACTOR_LOCK_MS after the last one (no code is judged
   * meanwhile, so no wrong code is counted and the lock ends when it says). Null when not locked.
   */
  async function lockedUntil(accountId: number): Promise<number | null> {
    const now = clock();
    const failures = await recentTwoFactorFailures(db, accountId, now - TWO_FACTOR_LOCK_MS, TWO_FACTOR_LOCK_AFTER);
    if (failures.length < TWO_FACTOR_LOCK_AFTER) return null;
    const newest = failures[0]!;
    const oldest = failures[TWO_FACTOR_LOCK_AFTER - 1]!;
    if (newest - oldest > TWO_FACTOR_LOCK_MS) return null;
    const until = newest + TWO_FACTOR_LOCK_MS;
    return until > now ? until : null;
  }

  /** Refuses (429, Retry-After) while the account's code checks are locked. */
  async function refuseWhileLocked(accountId: number) {
    const until = await lockedUntil(accountId);
    if (until === null) return;
    const waitS = Math.max(1, Math.ceil((until - clock()) / 1000));
    throw new AppError(
      429,
      `code: too many wrong codes on this account; two-factor codes are locked until ${new Date(until).toISOString()} (in ${Math.ceil(waitS / 60)} min)`,
      {},
      { 'retry-after': String(waitS) },
    );
  }

  /** A wrong code recorded; the one that starts a lock is recorded as such too (the owner sees both). */
  async function recordWrongCode(account: PersonRow, reason: string, ctx: RequestContext) {
    await record(account, 'two_factor_failed', reason, ctx);
    if ((await lockedUntil(account.id)) !== null)
      await record(
        account,
        'two_factor_locked',
        `${TWO_FACTOR_LOCK_AFTER} wrong codes within ${TWO_FACTOR_LOCK_MS / 60_000} min; codes locked for ${TWO_FACTOR_LOCK_MS / 60_000} min`,
        ctx,
      );
  }

  /** The provider's name as the sign-in button says it. */
  const providerName = () => config.oidc?.name ?? 'single sign-on';

  /**
   * A person without a password has none to check: what they do needs their provider instead (409
   * naming it). `what` ends the sentence: "…; <what>".
   */
  function refuseWithoutPassword(account: PersonRow, what: string) {
    if (signInOf(account) === 'single_sign_on')
      throw conflict(`you have no password here: you sign in through ${providerName()}; ${what}`);
  }

  /**
   * The proof of a person without a password: this session was started by a sign-in through the
   * provider (their only way in) less than FRESH_SIGN_IN_MS ago (docs/decisions.md).
   */
  async function requireFreshSignIn(sessionId: string) {
    const started = await findSessionStartedAt(db, sessionHash(sessionId));
    if (started === undefined || started <= clock() - FRESH_SIGN_IN_MS)
      throw forbidden(
        `sign in again through ${providerName()} to confirm, then close the account within ${FRESH_SIGN_IN_MS / 60_000} minutes`,
      );
  }

  async function requirePassword(account: PersonRow, password: string | undefined, field: string) {
    if (password === undefined) throw new AppError(400, `${field}: is required`);
    if (!(await verifyPassword(password, account.password_hash)))
      throw forbidden(`${field}: not the account's current password`);
  }

  /**
   * Checks a second-factor code: a 6-digit TOTP code (each time step taken once) or an unused
   * recovery code (then used up). Answers which one it was, or why it was refused.
   */
  async function checkCode(account: PersonRow, code: string): Promise<'totp' | 'recovery' | 'wrong' | 'reused'> {
    const trimmed = code.trim();
    if (/^[0-9]{6}$/.test(trimmed)) {
      if (!account.totp_secret_enc) return 'wrong';
      const step = matchTotp(secrets.open(account.totp_secret_enc), trimmed, clock());
      if (step === null) return 'wrong';
      if (!(await claimTotpStep(db, account.id, step))) return 'reused';
      await personChanged(account.id);
      return 'totp';
    }
    const normalized = normalizeRecoveryCode(trimmed);
    if (!/^[a-z0-9]{10}$/.test(normalized)) return 'wrong';
    return (await useRecoveryCode(db, account.id, sha256(normalized), clock())) ? 'recovery' : 'wrong';
  }

  /** The code a request brought, refused with 403 naming `code` (and recorded) unless it is good. */
  async function requireCode(account: PersonRow, code: string | undefined, ctx: RequestContext) {
    if (code === undefined) throw new AppError(400, 'code: is required (two-factor sign-in is on)');
    await refuseWhileLocked(account.id);
    const verdict = await checkCode(account, code);
    if (verdict === 'wrong' || verdict === 'reused') {
      await recordWrongCode(account, verdict === 'reused' ? 'code already used' : 'wrong code', ctx);
      throw forbidden(verdict === 'reused' ? 'code: already used; wait for the next one' : 'code: wrong code');
    }
    if (verdict === 'recovery') await record(account, 'recovery_code_used', 'recovery code', ctx);
  }

  async function twoFactorStatus(account: PersonRow): Promise<TwoFactorStatus> {
    const enabled = account.totp_enabled_at !== null;
    return {
      enabled,
      enabled_at: account.totp_enabled_at,
      recovery_codes_left: enabled ? await countUnusedRecoveryCodes(db, account.id) : 0,
    };
  }

  return {
    /** Answers how many other sessions were signed out. */
    async changePassword(
      account: PersonRow,
      sessionId: string,
      oldPassword: string,
      newPassword: string,
      ctx: RequestContext,
    ) {
      refuseWithoutPassword(account, 'your password is managed there');
      await requirePassword(account, oldPassword, 'old_password');
      await setPersonPassword(db, account.id, await hashPassword(newPassword, config.passwordCost));
      await personChanged(account.id);
      const ended = await deleteOtherSessions(db, account.id, sessionHash(sessionId));
      // A sign-in that got past the old password and waits for its code ends too.
      await deletePersonLoginChallenges(db, account.id);
      await record(account, 'password_changed', `${ended} other session(s) signed out`, ctx);
      return ended;
    },

    async listSessions(accountId: number, currentSessionId: string): Promise<AccountSession[]> {
      const current = sessionHash(currentSessionId);
      const rows = await listPersonSessions(db, accountId, clock());
      return rows.map((row) => ({
        id: row.id_hash,
        device: deviceInWords(row.user_agent),
        ip: row.ip,
        created_at: row.created_at,
        last_seen_at: row.last_seen_at ?? row.created_at,
        current: row.id_hash === current,
      }));
    },

    async revokeSession(accountId: number, id: string) {
      if (!(await deletePersonSession(db, accountId, id))) throw notFound('session');
    },

    async revokeOtherSessions(account: PersonRow, currentSessionId: string, ctx: RequestContext) {
      const ended = await deleteOtherSessions(db, account.id, sessionHash(currentSessionId));
      await record(account, 'sessions_revoked', `${ended} session(s) signed out`, ctx);
      return ended;
    },

    twoFactorStatus,

    /** A new secret, sealed until a code confirms it; shown this once. */
    async setupTwoFactor(account: PersonRow, password: string | undefined) {
      if (account.totp_enabled_at !== null) throw conflict('two-factor sign-in is already on; turn it off first');
      refuseWithoutPassword(account, 'its sign-in, second factor included, stands for two-factor sign-in here');
      await requirePassword(account, password, 'password');
      const secret = newTotpSecret();
      await setPendingTotp(db, account.id, secrets.seal(secret));
      await personChanged(account.id);
      return { secret, uri: totpUri(secret, account.email) };
    },

    /** Confirms the pending secret with a code from the app; answers the recovery codes, once. */
    async enableTwoFactor(account: PersonRow, code: string, ctx: RequestContext) {
      if (account.totp_enabled_at !== null) throw conflict('two-factor sign-in is already on');
      if (!account.totp_pending_enc) throw conflict('no two-factor setup is waiting; start with the password first');
      const step = matchTotp(secrets.open(account.totp_pending_enc), code.trim(), clock());
      if (step === null) throw forbidden('code: wrong code; check the time on your phone and type the current one');
      const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
      await enableTotp(db, account.id, {
        sealed: account.totp_pending_enc,
        step,
        now: clock(),
        codeHashes: codes.map((c) => sha256(normalizeRecoveryCode(c))),
      });
      await personChanged(account.id);
      await record(account, 'two_factor_enabled', `${RECOVERY_CODE_COUNT} recovery codes issued`, ctx);
      return codes;
    },

    /** Off with the password or a code (the app's or a recovery code). */
    async disableTwoFactor(account: PersonRow, proof: Proof, ctx: RequestContext) {
      if (account.totp_enabled_at === null) throw conflict('two-factor sign-in is not on');
      if (proof.password !== undefined) await requirePassword(account, proof.password, 'password');
      else if (proof.code !== undefined) await requireCode(account, proof.code, ctx);
      else throw new AppError(400, 'password: is required (or code)');
      await disableTotp(db, account.id);
      await personChanged(account.id);
      await record(
        account,
        'two_factor_disabled',
        proof.password !== undefined ? 'with the password' : 'with a code',
        ctx,
      );
      return twoFactorStatus((await findPersonById(db, account.id))!);
    },

    /** The password was right on an account with two-factor on: a challenge, and no session yet. */
    async beginChallenge(accountId: number): Promise<TwoFactorChallenge> {
      const challenge = randomBytes(32).toString('base64url');
      const now = clock();
      const expires_at = now + CHALLENGE_TTL_MS;
      await insertLoginChallenge(db, {
        id_hash: sha256(challenge),
        person_id: accountId,
        created_at: now,
        expires_at,
      });
      return { two_factor_required: true, challenge, expires_at };
    },

    /** The second step: the account when the code is good; the challenge is used up either way after 5 wrong codes. */
    async completeChallenge(
      challenge: string,
      code: string,
      ctx: RequestContext,
      /** Called with the challenge's account before its code is judged: the per-account limit (routes/auth). */
      beforeJudging: (accountId: number) => Promise<void> = async () => {},
    ): Promise<PersonRow> {
      const idHash = sha256(challenge);
      const found = await findLoginChallenge(db, idHash, clock());
      if (!found) throw unauthorized('challenge: expired or unknown; sign in with your password again');
      const account = await findPersonById(db, found.person_id);
      if (!account || account.disabled_at !== null || account.totp_enabled_at === null) {
        await deleteLoginChallenge(db, idHash);
        throw unauthorized('challenge: expired or unknown; sign in with your password again');
      }
      await beforeJudging(account.id);
      await refuseWhileLocked(account.id);
      const verdict = await checkCode(account, code);
      if (verdict === 'wrong' || verdict === 'reused') {
        await recordWrongCode(account, verdict === 'reused' ? 'code already used' : 'wrong code', ctx);
        const failures = await countChallengeFailure(db, idHash);
        if (failures >= CHALLENGE_MAX_FAILURES) {
          await deleteLoginChallenge(db, idHash);
          throw unauthorized('code: wrong code, too many times; sign in with your password again');
        }
        throw unauthorized(verdict === 'reused' ? 'code: already used; wait for the next one' : 'code: wrong code');
      }
      if (verdict === 'recovery') await record(account, 'recovery_code_used', 'recovery code at sign-in', ctx);
      await deleteLoginChallenge(db, idHash);
      return account;
    },

    /**
     * The person goes, with every team they are the only member of and everything it owns, in one
     * transaction; a team they are the last owner of with other members refuses (transfer it
     * first). Admins are closed by the operator. Proof: the password (and code), or for a person
     * without a password a fresh sign-in through the provider.
     */
    async deleteAccount(account: PersonRow, sessionId: string, proof: Proof, ctx: RequestContext) {
      if (account.role === 'admin')
        throw conflict('an admin account is closed by the console operator (palisade-console admin disable)');
      if (signInOf(account) === 'single_sign_on') await requireFreshSignIn(sessionId);
      else {
        await requirePassword(account, proof.password, 'password');
        if (account.totp_enabled_at !== null) await requireCode(account, proof.code, ctx);
      }
      const teams = await listPersonTeamIds(db, account.id);
      const refused = await deletePersonAndSoleTeams(db, account.id);
      if (refused)
        throw conflict(
          `team ${refused}: you are its last owner and it has other members; make another member owner first`,
        );
      await personChanged(account.id, teams);
    },
  };
}

export type AccountSecurityService = ReturnType<typeof createAccountSecurityService>;
