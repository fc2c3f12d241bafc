import type { SignIn, TeamPermission, TeamRole } from '@palisade/protocol';
import type { Generated, Insertable, Selectable } from 'kysely';

/**
 * The team and identity tables: teams, the people who sign in (migration 0028), their
 * memberships and invitations, their sessions, second factors and single sign-on identities. Part of
 * `DB` (schema.ts). Timestamps are epoch milliseconds; flags are 0/1 integers.
 */
export interface TeamTables {
  accounts: AccountsTable;
  people: PeopleTable;
  team_members: TeamMembersTable;
  team_invitations: TeamInvitationsTable;
  oidc_logins: OidcLoginsTable;
  person_identities: PersonIdentitiesTable;
  sessions: SessionsTable;
  recovery_codes: RecoveryCodesTable;
  login_challenges: LoginChallengesTable;
}

/**
 * A team (docs/teams.md): every table with an `account_id` is the team's. Since migration 0028 only
 * `id`, `name` and `created_at` are read; the identity columns stay for SQLite's sake, filled with
 * placeholders for new teams (docs/decisions.md, "Teams").
 */
export interface AccountsTable {
  id: Generated<number>;
  email: string;
  name: string;
  password_hash: string;
  role: 'user' | 'admin';
  permissions: string; // JSON array of Permission
  disabled_at: number | null;
  created_at: number;
  /** The TOTP secret, sealed (secrets.ts); null while two-factor sign-in is off. */
  totp_secret_enc: Generated<string | null>;
  /** A secret being set up, until a code confirms it. */
  totp_pending_enc: Generated<string | null>;
  totp_enabled_at: Generated<number | null>;
  /** The last time step whose code was taken: a code is good once. */
  totp_last_step: Generated<number | null>;
  /** 1: every member must have two-factor sign-in on to act in the team (migration 0028). */
  require_two_factor: Generated<number>;
}

/** Who signs in (migration 0028): a person belongs to teams through `team_members`. */
export interface PeopleTable {
  id: Generated<number>;
  email: string;
  name: string;
  password_hash: string;
  /** Console-wide: `admin` runs the console (catalog, every ticket), whatever the teams. */
  role: 'user' | 'admin';
  disabled_at: number | null;
  created_at: number;
  /** The TOTP secret, sealed (secrets.ts); null while two-factor sign-in is off. */
  totp_secret_enc: string | null;
  /** A secret being set up, until a code confirms it. */
  totp_pending_enc: string | null;
  totp_enabled_at: number | null;
  /** The last time step whose code was taken: a code is good once. */
  totp_last_step: number | null;
}

export interface TeamMembersTable {
  account_id: number;
  person_id: number;
  role: TeamRole;
  /** JSON arrays of `control.*` permissions added to or taken from the role (the admin CLI's grant/revoke). */
  granted: Generated<string>;
  revoked: Generated<string>;
  created_at: number;
}

/** An invitation to a team (docs/teams.md): the link's token is kept as its SHA-256 only. */
export interface TeamInvitationsTable {
  id: Generated<number>;
  account_id: number;
  token_hash: string;
  /** Who it was sent to, when an address was given; anyone holding the link may accept it. */
  email: string | null;
  role: TeamRole;
  invited_by: number | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  used_by: number | null;
  revoked_at: number | null;
}

/** A sign-in on its way to the OpenID provider (migration 0029), taken once by the callback. */
export interface OidcLoginsTable {
  /** SHA-256 of the `state` sent to the provider. */
  state_hash: string;
  nonce: string;
  /** The PKCE verifier (S256). */
  code_verifier: string;
  /** A path on this console (`/dashboard/...`). */
  return_to: string;
  created_at: number;
}

/** A provider's account (issuer, subject) linked to a person (migration 0029). */
export interface PersonIdentitiesTable {
  id: Generated<number>;
  person_id: number;
  issuer: string;
  subject: string;
  created_at: number;
}

export interface SessionsTable {
  id_hash: string;
  /** The team the session acts in when a request does not name one. */
  account_id: number;
  person_id: number;
  created_at: number;
  expires_at: number;
  /** Updated at most once a minute (docs/security.md, "Account security"). */
  last_seen_at: number | null;
  ip: string | null;
  user_agent: string | null;
}

export interface RecoveryCodesTable {
  id: Generated<number>;
  person_id: number;
  code_hash: string;
  used_at: number | null;
  created_at: number;
}

/** A sign-in whose password was right, waiting for its two-factor code. */
export interface LoginChallengesTable {
  id_hash: string;
  person_id: number;
  failures: Generated<number>;
  created_at: number;
  expires_at: number;
}

export type AccountRow = Selectable<AccountsTable>;
export type NewAccount = Insertable<AccountsTable>;
export type PersonRow = Selectable<PeopleTable>;
export type TeamMemberRow = Selectable<TeamMembersTable>;

/**
 * Who a request acts as (docs/teams.md): a person in one team. `id` is the team's, the `account_id`
 * every query scopes by; `name`, `email` and `role` (console-wide) are the person's; `permissions`
 * is the JSON array of the `control.*` permissions the member holds there (the seed's meaning),
 * `team_permissions` everything their role and overrides grant.
 */
export interface Actor {
  id: number;
  person_id: number;
  name: string;
  email: string;
  role: 'user' | 'admin';
  permissions: string;
  team_name: string;
  team_role: TeamRole;
  team_permissions: readonly TeamPermission[];
  /** The team requires two-factor sign-in and the person has not turned it on: only their own routes answer. */
  two_factor_missing: boolean;
  /** How the person signs in: `single_sign_on` when they have no password (services/accounts.service.ts, `signInOf`). */
  sign_in: SignIn;
  /** When the person signed up. */
  created_at: number;
}
