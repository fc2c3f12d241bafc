import { hash, randomBytes } from 'node:crypto';
import {
  type ActingTeam,
  effectivePermissions,
  isTeamRole,
  PERMISSIONS,
  type SignIn,
  type TeamRole,
} from '@palisade/protocol';
import type { ConsoleConfig, Permission } from '../config.js';
import type { Actor, Database, PersonRow } from '../db/schema.js';
import { AppError, conflict, isUniqueViolation, notFound, permissionRequired } from '../errors.js';
import { parseJson } from '../json.js';
import { insertTeam } from '../repositories/accounts.repository.js';
import {
  countAdmins,
  findPersonByEmail,
  findPersonById,
  insertPerson,
  replacePersonPassword,
  setPersonDisabled,
} from '../repositories/people.repository.js';
import {
  deletePersonSessions,
  deleteSession,
  findLiveSession,
  findLiveSessionInTeam,
  insertSession,
  isLiveSession,
  touchSession,
} from '../repositories/sessions.repository.js';
import {
  findMember,
  insertTeamMember,
  listPersonTeamIds,
  listPersonTeams,
  setMemberOverrides,
  setSoleTeamsDisabled,
} from '../repositories/team-members.repository.js';
import type { Coherence } from './coherence/index.js';
import { decoyHash, hashPassword, NO_PASSWORD, verifyPassword, weakerThan } from './passwords.js';

/** A refused login; the person (when the email is known) and why stay on the server, for the security event stream. */
export class LoginRefused extends AppError {
  constructor(
    readonly personId: number | null,
    readonly why: 'unknown email' | 'wrong password' | 'disabled account' | 'signs in with single sign-on only',
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
  team: ActingTeam;
  permissions: Permission[];
  sign_in: SignIn;
  created_at: number;
}

/** The team an actor acts in and their role there: the `team` of both `/me` answers (docs/teams.md). */
export const actingTeam = (actor: Actor): ActingTeam => ({
  id: actor.id,
  name: actor.team_name,
  role: actor.team_role,
});

/** The signed-in person as the seed showed the account: their id, name, email, console role, the team and `control.*` in it. */
export function accountView(actor: Actor): AccountView {
  return {
    id: actor.person_id,
    name: actor.name,
    email: actor.email,
    role: actor.role,
    team: actingTeam(actor),
    permissions: parsePermissions(actor.permissions),
    sign_in: actor.sign_in,
    created_at: actor.created_at,
  };
}

/** The person's row with their membership (team-members.repository.ts, MEMBER_COLUMNS). */
export type ActorRow = PersonRow & {
  team_id: number;
  team_role: string;
  team_granted: string;
  team_revoked: string;
  team_name: string;
  team_requires_two_factor: number;
};

export function actorOf(row: ActorRow): Actor {
  const role: TeamRole = isTeamRole(row.team_role) ? row.team_role : 'viewer';
  const team_permissions = effectivePermissions(
    role,
    parsePermissions(row.team_granted),
    parsePermissions(row.team_revoked),
  );
  const control = team_permissions.filter((p): p is Permission => (PERMISSIONS as readonly string[]).includes(p));
  return {
    id: Number(row.team_id),
    person_id: Number(row.id),
    name: row.name,
    email: row.email,
    role: row.role,
    permissions: JSON.stringify(control),
    team_name: row.team_name,
    team_role: role,
    team_permissions,
    // A person who signs in only through the OpenID provider is held to its sign-in, second factor
    // included (docs/decisions.md, "Single sign-on and two-factor sign-in").
    two_factor_missing: Number(row.team_requires_two_factor) === 1 && !hasSecondFactor(row),
    sign_in: signInOf(row),
    created_at: Number(row.created_at),
  };
}

/**
 * Whether the person meets a team's two-factor requirement: a code of ours on, or signing in only
 * through the OpenID provider, whose sign-in (second factor included) holds them (docs/decisions.md,
 * "Single sign-on and two-factor sign-in").
 */
export function hasSecondFactor(person: Pick<PersonRow, 'totp_enabled_at' | 'password_hash'>): boolean {
  return person.totp_enabled_at !== null || signInOf(person) === 'single_sign_on';
}

/**
 * `single_sign_on` for a person without a password (made by single sign-on): every session of theirs
 * was started by the provider, since every other way in checks or sets a password.
 */
export const signInOf = (person: Pick<PersonRow, 'password_hash'>): SignIn =>
  person.password_hash === NO_PASSWORD ? 'single_sign_on' : 'password';

/** 403 unless the actor holds this permission (docs/fleet.md, "Proxies"). */
export function requirePermission(account: Pick<Actor, 'permissions'>, needed: Permission) {
  if (!parsePermissions(account.permissions).includes(needed)) throw permissionRequired(needed);
}

export function parsePermissions(json: string): Permission[] {
  const value = parseJson<unknown>(json, []);
  return Array.isArray(value)
    ? value.filter((p): p is Permission => (PERMISSIONS as readonly unknown[]).includes(p))
    : [];
}

/** What is stored of a session id; also the session's id in the sessions list. */
export const sessionHash = (id: string) => hash('sha256', id, 'hex');

/** Where a session was made from, as the request said. */
export interface SessionClient {
  ip: string | null;
  userAgent: string | null;
}

/** A session's person in the team it acts in; `not_member` when the request named a team the person is not in. */
export type SessionLookup = { actor: Actor; person: PersonRow } | 'not_member' | undefined;

/**
 * Who signs up: e-mail, name, password, and the console-wide role (the admin CLI makes admins). No
 * password (null): a person made by single sign-on, who signs in only through the provider.
 */
export interface NewPerson {
  email: string;
  password: string | null;
  name: string;
  role?: 'user' | 'admin';
}

export interface AccountsDeps {
  db: Database;
  clock: () => number;
  config: Pick<ConsoleConfig, 'defaultPermissions' | 'passwordCost'>;
  /** Cached token lookups hold the person and their membership: every change to them is published (services/coherence/). */
  changes: Pick<Coherence, 'changed'>;
}

export function createAccountsService({ db, clock, config, changes }: AccountsDeps) {
  /** Every team the person is in, told to every process (a cached token lookup holds the person's row). */
  async function personChanged(personId: number) {
    for (const teamId of await listPersonTeamIds(db, personId)) await changes.changed(teamId);
  }

  /**
   * A team named `name` with `personId` as its owner. A new owner gets what the role grants, but
   * no `control.*` permission PALISADE_DEFAULT_PERMISSIONS leaves out (stored as overrides).
   */
  async function createTeam(trx: Database, personId: number, name: string) {
    const team = await insertTeam(trx, { name, created_at: clock() });
    await insertTeamMember(trx, {
      account_id: team.id,
      person_id: personId,
      role: 'owner',
      granted: '[]',
      revoked: JSON.stringify(PERMISSIONS.filter((p) => !config.defaultPermissions.includes(p))),
      created_at: clock(),
    });
    return team;
  }

  /**
   * A person, then what `andThen` adds in the same transaction (their first team, or the team an
   * invitation names); an e-mail already taken is 409.
   */
  async function createPerson<T>(input: NewPerson, andThen: (trx: Database, person: PersonRow) => Promise<T>) {
    const password_hash =
      input.password === null ? NO_PASSWORD : await hashPassword(input.password, config.passwordCost);
    try {
      return await db.transaction().execute(async (trx) => {
        const person = await insertPerson(trx, {
          email: input.email.toLowerCase(),
          name: input.name,
          password_hash,
          role: input.role ?? 'user',
          disabled_at: null,
          created_at: clock(),
          totp_secret_enc: null,
          totp_pending_enc: null,
          totp_enabled_at: null,
          totp_last_step: null,
        });
        return { person, also: await andThen(trx, person) };
      });
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict('an account with this email already exists');
      throw err;
    }
  }

  /** A person and their first team, named after them, with them as its owner. */
  async function create(input: NewPerson) {
    const { person, also: team } = await createPerson(input, (trx, p) => createTeam(trx, p.id, input.name));
    return { person, teamId: team.id };
  }

  /** The person as a member of the team; undefined when they are not one. */
  async function memberActor(teamId: number, personId: number) {
    const row = await findMember(db, teamId, personId);
    return row ? actorOf(row) : undefined;
  }

  /** The team a sign-in starts in: the person's first; a person in no team any more gets a new one. */
  async function homeTeam(person: PersonRow): Promise<number> {
    const teams = await listPersonTeams(db, person.id);
    if (teams[0]) return Number(teams[0].id);
    const team = await db.transaction().execute((trx) => createTeam(trx, person.id, person.name));
    return team.id;
  }

  /** A new session acting in `teamId`; where it was made from is kept for the sessions list (docs/security.md). */
  async function startSession(personId: number, teamId: number, client: SessionClient = { ip: null, userAgent: null }) {
    const id = randomBytes(32).toString('base64url');
    const now = clock();
    await insertSession(db, {
      id_hash: sessionHash(id),
      account_id: teamId,
      person_id: personId,
      created_at: now,
      expires_at: now + SESSION_TTL_MS,
      last_seen_at: now,
      ip: client.ip,
      user_agent: client.userAgent?.slice(0, 500) ?? null,
    });
    return { id, maxAgeS: SESSION_TTL_MS / 1000 };
  }

  async function requirePerson(email: string) {
    const person = await findPersonByEmail(db, email.toLowerCase());
    if (!person) throw notFound(`account ${email}`);
    return person;
  }

  return {
    create,
    createPerson,
    createTeam,
    startSession,
    homeTeam,
    memberActor,
    personChanged,

    /** Same answer and about the same work for an unknown email, a wrong password and a disabled account. */
    async login(email: string, password: string): Promise<PersonRow> {
      const person = await findPersonByEmail(db, email.toLowerCase());
      const hasPassword = person !== undefined && signInOf(person) === 'password';
      const ok = await verifyPassword(
        password,
        hasPassword ? person.password_hash : await decoyHash(config.passwordCost),
      );
      if (!person) throw new LoginRefused(null, 'unknown email');
      if (!hasPassword) throw new LoginRefused(person.id, 'signs in with single sign-on only');
      if (!ok) throw new LoginRefused(person.id, 'wrong password');
      if (person.disabled_at !== null) throw new LoginRefused(person.id, 'disabled account');
      // A hash made before PALISADE_PASSWORD_COST was raised is made again now that the password is known.
      if (weakerThan(person.password_hash, config.passwordCost)) {
        const stronger = await hashPassword(password, config.passwordCost);
        if (await replacePersonPassword(db, person.id, person.password_hash, stronger)) {
          await personChanged(person.id);
          return { ...person, password_hash: stronger };
        }
      }
      return person;
    },

    /**
     * The session's person acting in `teamId` (the request named it) or in the session's team;
     * with `ip`, also notes that the session was used (at most once a minute).
     */
    async sessionAccount(sessionId: string, ip?: string, teamId?: number): Promise<SessionLookup> {
      const idHash = sessionHash(sessionId);
      const now = clock();
      const found =
        teamId === undefined
          ? await findLiveSession(db, idHash, now)
          : await findLiveSessionInTeam(db, idHash, now, teamId);
      if (!found) {
        if (teamId !== undefined && (await isLiveSession(db, idHash, now))) return 'not_member';
        return undefined;
      }
      const { session_seen_at, ...row } = found;
      if (ip !== undefined && (session_seen_at === null || session_seen_at <= now - 60_000))
        await touchSession(db, idHash, now, ip);
      const {
        team_id: _t,
        team_role: _r,
        team_granted: _g,
        team_revoked: _v,
        team_name: _n,
        team_requires_two_factor: _f,
        ...person
      } = row;
      return { actor: actorOf(row), person };
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
      const person = await requirePerson(email);
      await setPersonDisabled(db, person.id, disabled ? clock() : null);
      await setSoleTeamsDisabled(db, person.id, disabled ? clock() : null);
      await personChanged(person.id);
      if (disabled) await deletePersonSessions(db, person.id);
      return person;
    },

    /**
     * The admin CLI's grant/revoke: an override on the person's membership in every team they are
     * in (docs/teams.md); answers the `control.*` permissions they now hold in their first team.
     */
    async setPermission(email: string, permission: Permission, granted: boolean) {
      const person = await requirePerson(email);
      const teams = await listPersonTeams(db, person.id);
      let first: Permission[] | null = null;
      for (const team of teams) {
        const member = await findMember(db, Number(team.id), person.id);
        if (!member) continue;
        const grants = new Set(parsePermissions(member.team_granted));
        const revokes = new Set(parsePermissions(member.team_revoked));
        if (granted) {
          revokes.delete(permission);
          grants.add(permission);
        } else {
          grants.delete(permission);
          revokes.add(permission);
        }
        await setMemberOverrides(db, Number(team.id), person.id, {
          granted: JSON.stringify([...grants].sort()),
          revoked: JSON.stringify([...revokes].sort()),
        });
        await changes.changed(Number(team.id));
        const now = await memberActor(Number(team.id), person.id);
        first ??= now ? parsePermissions(now.permissions) : [];
      }
      return [...(first ?? [])].sort();
    },

    findPerson: (id: number) => findPersonById(db, id),
  };
}

export type AccountsService = ReturnType<typeof createAccountsService>;
