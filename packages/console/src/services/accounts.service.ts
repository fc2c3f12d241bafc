import { hash, randomBytes } from 'node:crypto';
import type { ConsoleConfig, Permission } from '../config.js';
import type { AccountRow, Database } from '../db/schema.js';
import { AppError, conflict, isUniqueViolation, notFound, permissionRequired } from '../errors.js';
import { parseJson } from '../json.js';
import {
  countAdmins,
  findAccountByEmail,
  insertAccount,
  replaceAccountPassword,
  setAccountDisabled,
  setAccountPermissions,
} from '../repositories/accounts.repository.js';
import {
  deleteAccountSessions,
  deleteSession,
  findLiveSession,
  insertSession,
  touchSession,
} from '../repositories/sessions.repository.js';
import type { Coherence } from './coherence/index.js';
import { decoyHash, hashPassword, verifyPassword, weakerThan } from './passwords.js';

/** A refused login; the account (when the email is known) and why stay on the server, for the security event stream. */
export class LoginRefused extends AppError {
  constructor(
    readonly accountId: number | null,
    readonly why: 'unknown email' | 'wrong password' | 'disabled account',
  ) {
    super(401, INVALID_LOGIN);
  }
}

export const SESSION_TTL_MS = 30 * 24 * 3600 * 1000;
export const INVALID_LOGIN = 'invalid email or password';

export interface AccountView {
  id: number;
  name: string;
  email: string;
  role: string;
  permissions: Permission[];
  created_at: number;
}

export function accountView(row: AccountRow): AccountView {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    role: row.role,
    permissions: parsePermissions(row.permissions),
    created_at: row.created_at,
  };
}

/** 403 unless the account holds this permission (docs/fleet.md, "Proxies"). */
export function requirePermission(account: Pick<AccountRow, 'permissions'>, needed: Permission) {
  if (!parsePermissions(account.permissions).includes(needed)) throw permissionRequired(needed);
}

export function parsePermissions(json: string): Permission[] {
  const value = parseJson<unknown>(json, []);
  return Array.isArray(value) ? value.filter((p): p is Permission => typeof p === 'string') : [];
}

/** What is stored of a session id; also the session's id in the sessions list. */
export const sessionHash = (id: string) => hash('sha256', id, 'hex');

/** Where a session was made from, as the request said. */
export interface SessionClient {
  ip: string | null;
  userAgent: string | null;
}

export interface AccountsDeps {
  db: Database;
  clock: () => number;
  config: Pick<ConsoleConfig, 'defaultPermissions' | 'passwordCost'>;
  /** Cached token lookups hold the account row: every change to it is published (services/coherence/). */
  changes: Pick<Coherence, 'changed'>;
}

export function createAccountsService({ db, clock, config, changes }: AccountsDeps) {
  async function create(input: { email: string; password: string; name: string; role?: 'user' | 'admin' }) {
    const password_hash = await hashPassword(input.password, config.passwordCost);
    try {
      return await insertAccount(db, {
        email: input.email.toLowerCase(),
        name: input.name,
        password_hash,
        role: input.role ?? 'user',
        permissions: JSON.stringify(config.defaultPermissions),
        disabled_at: null,
        created_at: clock(),
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('an account with this email already exists');
      throw err;
    }
  }

  /** A new session; where it was made from is kept for the sessions list (docs/security.md). */
  async function startSession(accountId: number, client: SessionClient = { ip: null, userAgent: null }) {
    const id = randomBytes(32).toString('base64url');
    const now = clock();
    await insertSession(db, {
      id_hash: sessionHash(id),
      account_id: accountId,
      created_at: now,
      expires_at: now + SESSION_TTL_MS,
      last_seen_at: now,
      ip: client.ip,
      user_agent: client.userAgent?.slice(0, 500) ?? null,
    });
    return { id, maxAgeS: SESSION_TTL_MS / 1000 };
  }

  async function requireAccount(email: string) {
    const account = await findAccountByEmail(db, email.toLowerCase());
    if (!account) throw notFound(`account ${email}`);
    return account;
  }

  return {
    create,
    startSession,

    /** Same answer and about the same work for an unknown email, a wrong password and a disabled account. */
    async login(email: string, password: string) {
      const account = await findAccountByEmail(db, email.toLowerCase());
      const ok = await verifyPassword(password, account?.password_hash ?? (await decoyHash(config.passwordCost)));
      if (!account) throw new LoginRefused(null, 'unknown email');
      if (!ok) throw new LoginRefused(account.id, 'wrong password');
      if (account.disabled_at !== null) throw new LoginRefused(account.id, 'disabled account');
      // A hash made before PALISADE_PASSWORD_COST was raised is made again now that the password is known.
      if (weakerThan(account.password_hash, config.passwordCost)) {
        const stronger = await hashPassword(password, config.passwordCost);
        if (await replaceAccountPassword(db, account.id, account.password_hash, stronger)) {
          await changes.changed(account.id);
          return { ...account, password_hash: stronger };
        }
      }
      return account;
    },

    /** The session's account; with `ip`, also notes that the session was used (at most once a minute). */
    async sessionAccount(sessionId: string, ip?: string): Promise<AccountRow | undefined> {
      const idHash = sessionHash(sessionId);
      const now = clock();
      const found = await findLiveSession(db, idHash, now);
      if (!found) return undefined;
      const { session_seen_at, ...account } = found;
      if (ip !== undefined && (session_seen_at === null || session_seen_at <= now - 60_000))
        await touchSession(db, idHash, now, ip);
      return account;
    },

    async endSession(sessionId: string) {
      await deleteSession(db, sessionHash(sessionId));
    },

    async ensureBootstrapAdmin(): Promise<{ email: string; password: string } | null> {
      if ((await countAdmins(db)) > 0) return null;
      const email = 'admin@palisade.local';
      const password = randomBytes(18).toString('base64url');
      try {
        await create({ email, password, name: 'Administrator', role: 'admin' });
      } catch (err) {
        if (err instanceof AppError && err.status === 409) return null; // another console process won the race
        throw err;
      }
      return { email, password };
    },

    async setDisabled(email: string, disabled: boolean) {
      const account = await requireAccount(email);
      await setAccountDisabled(db, account.id, disabled ? clock() : null);
      await changes.changed(account.id);
      if (disabled) await deleteAccountSessions(db, account.id);
      return account;
    },

    async setPermission(email: string, permission: Permission, granted: boolean) {
      const account = await requireAccount(email);
      const current = new Set(parsePermissions(account.permissions));
      if (granted) current.add(permission);
      else current.delete(permission);
      await setAccountPermissions(db, account.id, JSON.stringify([...current].sort()));
      await changes.changed(account.id);
      return [...current].sort();
    },
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
