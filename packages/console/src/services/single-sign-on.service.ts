import { hash } from 'node:crypto';
import { hasControlCharacters, ROLE_RANK, type TeamRole } from '@palisade/protocol';
import * as openid from 'openid-client';
import type { OidcConfig } from '../config.js';
import type { Database, PersonRow } from '../db/schema.js';
import { AppError, isUniqueViolation, notFound } from '../errors.js';
import { deleteOidcLoginsBefore, insertOidcLogin, takeOidcLogin } from '../repositories/oidc-logins.repository.js';
import { findPersonByEmail } from '../repositories/people.repository.js';
import { findIdentityPerson, insertPersonIdentity } from '../repositories/person-identities.repository.js';
import type { AccountsService } from './accounts.service.js';
import type { AuditService } from './audit.service.js';
import type { TeamsService } from './teams.service.js';

/** A sign-in left at the provider is finished within this time, or started again. */
export const OIDC_LOGIN_TTL_MS = 10 * 60_000;

/** Where a sign-in returns when it names nowhere (or somewhere else than the dashboard). */
export const DEFAULT_RETURN_TO = '/dashboard';

/** A single sign-on refused: `reason` is shown on the sign-in page; `personId` when the person is known. */
export class SsoRefused extends Error {
  constructor(
    readonly reason: string,
    readonly personId: number | null = null,
  ) {
    super(reason);
  }
}

/** The OpenID provider as the console uses it (openIdProvider: openid-client); tests may point it anywhere. */
export interface OidcProvider {
  /** The provider's authorization address for a sign-in with these checks (PKCE S256). */
  authorizationUrl(checks: { state: string; nonce: string; codeChallenge: string }): Promise<URL>;
  /**
   * The code in `callbackUrl` exchanged for the ID token, whose signature, issuer, audience, expiry,
   * nonce and the state were checked; answers its claims. Throws SsoRefused.
   */
  idTokenClaims(
    callbackUrl: URL,
    checks: { state: string; nonce: string; codeVerifier: string },
  ): Promise<Record<string, unknown>>;
}

const unreachable = (issuer: string) =>
  new AppError(503, `single sign-on: the OpenID provider at ${issuer} cannot be reached; try again in a moment`);

/**
 * openid-client against the provider in `settings`. Discovery happens at the first sign-in, not at
 * start (a console starts while the provider is down), and again after a failure. The ID token's
 * signature is checked against the provider's published keys (enableNonRepudiationChecks): the
 * console does not rest on the token endpoint's TLS alone.
 */
export function openIdProvider(settings: OidcConfig): OidcProvider {
  let discovered: Promise<openid.Configuration> | null = null;
  const configuration = () => {
    discovered ??= openid
      .discovery(
        new URL(settings.issuer),
        settings.clientId,
        { redirect_uris: [settings.redirectUri] },
        openid.ClientSecretBasic(settings.clientSecret),
        {
          timeout: 10,
          // http:// is accepted by the settings only for a provider on this machine (config.ts).
          execute: [
            ...(settings.issuer.startsWith('http://') ? [openid.allowInsecureRequests] : []),
            openid.enableNonRepudiationChecks,
          ],
        },
      )
      .catch((err: unknown) => {
        discovered = null;
        throw err;
      });
    return discovered;
  };
  const reachable = async () => {
    try {
      return await configuration();
    } catch {
      throw unreachable(settings.issuer);
    }
  };

  return {
    async authorizationUrl({ state, nonce, codeChallenge }) {
      return openid.buildAuthorizationUrl(await reachable(), {
        redirect_uri: settings.redirectUri,
        scope: 'openid email profile',
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
        state,
        nonce,
      });
    },
    async idTokenClaims(callbackUrl, { state, nonce, codeVerifier }) {
      let config: openid.Configuration;
      try {
        config = await reachable();
      } catch (err) {
        throw new SsoRefused((err as Error).message);
      }
      try {
        const tokens = await openid.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: codeVerifier,
          expectedState: state,
          expectedNonce: nonce,
          idTokenExpected: true,
        });
        return { ...(tokens.claims() ?? {}) };
      } catch (err) {
        if (err instanceof openid.AuthorizationResponseError)
          throw new SsoRefused(`the provider refused the sign-in: ${err.error_description ?? err.error}`);
        // openid-client's own words name the check (its cause: "JWT signature verification failed").
        const { message, cause } = err as { message?: string; cause?: { message?: unknown } };
        const said = typeof cause?.message === 'string' ? cause.message : String(message ?? err);
        throw new SsoRefused(`the provider's answer failed a check: ${said.slice(0, 200)}`);
      }
    },
  };
}

/** The state is kept as its SHA-256 only: what the database holds cannot finish a sign-in. */
const stateHash = (state: string) => hash('sha256', state, 'hex');

/**
 * `return_to`: a path of the dashboard on this console, or the default; anything else (another site,
 * `//host`, a backslash, control characters) is refused with 400 naming the field.
 */
export function returnPath(value: string | undefined): string {
  if (value === undefined || value === '') return DEFAULT_RETURN_TO;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (!/^\/dashboard(?:[/?#][^\\\u0000-\u001f\u007f]*)?$/.test(value) || value.length > 1000)
    throw new AppError(400, 'return_to: expected a path of the dashboard on this console, such as /dashboard/servers');
  return value;
}

/** The roles the groups claim gives, per team: the highest of the mappings that match (the first listed of equals). */
export function mappedRoles(settings: Pick<OidcConfig, 'teamMap'>, groups: readonly string[]) {
  const roles = new Map<number, TeamRole>();
  for (const { group, teamId, role } of settings.teamMap) {
    if (!groups.includes(group)) continue;
    const held = roles.get(teamId);
    if (held === undefined || ROLE_RANK[role] > ROLE_RANK[held]) roles.set(teamId, role);
  }
  return roles;
}

/** The groups claim as a list of names: an array of strings, or one string. */
function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string') : [];
}

export interface SingleSignOnDeps {
  db: Database;
  clock: () => number;
  settings: OidcConfig | null;
  provider: OidcProvider | null;
  accounts: Pick<AccountsService, 'createPerson' | 'homeTeam'>;
  teams: Pick<TeamsService, 'applyProviderRoles'>;
  audit: Pick<AuditService, 'team'>;
}

/** Single sign-on with the console's OpenID provider (docs/teams.md, "Single sign-on"). */
export function createSingleSignOnService({ db, clock, settings, provider, accounts, teams, audit }: SingleSignOnDeps) {
  const configured = () => {
    if (!settings || !provider) throw notFound('single sign-on (PALISADE_OIDC_ISSUER is not set)');
    return { settings, provider };
  };

  /** The provider's account, by its link, or linked or created by its e-mail (docs/decisions.md). */
  async function personFor(
    issuer: string,
    subject: string,
    email: string,
    name: string,
  ): Promise<{ person: PersonRow; created: boolean }> {
    const linked = await findIdentityPerson(db, issuer, subject);
    if (linked) return { person: linked, created: false };
    const domain = email.slice(email.lastIndexOf('@') + 1);
    const existing = await findPersonByEmail(db, email);
    if (existing) {
      // Only a domain the operator listed is trusted to name an existing person by e-mail.
      if (!settings!.allowedDomains.includes(domain))
        throw new SsoRefused(
          `a person with the e-mail ${email} already signs in here with a password; sign in with it (linking by e-mail needs the domain in PALISADE_OIDC_ALLOWED_DOMAINS)`,
          existing.id,
        );
      try {
        await insertPersonIdentity(db, { person_id: existing.id, issuer, subject, created_at: clock() });
      } catch (err) {
        if (!isUniqueViolation(err)) throw err;
      }
      return { person: (await findIdentityPerson(db, issuer, subject)) ?? existing, created: false };
    }
    try {
      const { person } = await accounts.createPerson({ email, name, password: null }, (trx, p) =>
        insertPersonIdentity(trx, { person_id: p.id, issuer, subject, created_at: clock() }),
      );
      return { person, created: true };
    } catch (err) {
      // Two first sign-ins at once: the other one made the person.
      const made = await findIdentityPerson(db, issuer, subject);
      if (made) return { person: made, created: false };
      throw err;
    }
  }

  return {
    /** For the sign-in page: whether single sign-on is set up, and the provider's name for the button. */
    status: () => ({ enabled: settings !== null, name: settings?.name ?? null }),

    /**
     * A sign-in on its way: the state, nonce and PKCE verifier kept in the database (any console
     * process can finish it); answers the provider's address to send the browser to.
     */
    async start(returnTo: string | undefined): Promise<string> {
      const { provider } = configured();
      const path = returnPath(returnTo);
      const state = openid.randomState();
      const nonce = openid.randomNonce();
      const codeVerifier = openid.randomPKCECodeVerifier();
      const url = await provider.authorizationUrl({
        state,
        nonce,
        codeChallenge: await openid.calculatePKCECodeChallenge(codeVerifier),
      });
      await deleteOidcLoginsBefore(db, clock() - OIDC_LOGIN_TTL_MS);
      await insertOidcLogin(db, {
        state_hash: stateHash(state),
        nonce,
        code_verifier: codeVerifier,
        return_to: path,
        created_at: clock(),
      });
      return url.href;
    },

    /**
     * The provider's answer: the waiting sign-in taken once by its state, the ID token checked, the
     * e-mail verified and its domain allowed, the person found, linked or created, their roles
     * applied. Answers whom to sign in, in which team, and where to return; throws SsoRefused.
     */
    async finish(callbackUrl: URL, ip: string | null) {
      const { settings, provider } = configured();
      const state = callbackUrl.searchParams.get('state');
      if (!state) throw new SsoRefused("the provider's answer carries no state");
      const login = await takeOidcLogin(db, stateHash(state));
      if (!login) throw new SsoRefused('this sign-in is unknown or was already used; start again');
      if (Number(login.created_at) < clock() - OIDC_LOGIN_TTL_MS)
        throw new SsoRefused('this sign-in took longer than 10 minutes; start again');
      const claims = await provider.idTokenClaims(callbackUrl, {
        state,
        nonce: login.nonce,
        codeVerifier: login.code_verifier,
      });
      const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : '';
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email) || hasControlCharacters(email) || email.length > 254)
        throw new SsoRefused('the provider gave no usable e-mail address (the email claim)');
      if (claims.email_verified !== true)
        throw new SsoRefused(`the provider has not verified the e-mail ${email} (email_verified)`);
      const domain = email.slice(email.lastIndexOf('@') + 1);
      if (settings.allowedDomains.length > 0 && !settings.allowedDomains.includes(domain))
        throw new SsoRefused(`e-mail addresses at ${domain} may not sign in here`);
      // The name shown for the person: the provider's, unless empty or with control characters.
      const name =
        [claims.name, claims.preferred_username].find(
          (n): n is string => typeof n === 'string' && n.trim() !== '' && !hasControlCharacters(n),
        ) ?? email.slice(0, email.indexOf('@'));
      const { person, created } = await personFor(
        settings.issuer,
        String(claims.sub),
        email,
        name.trim().slice(0, 100),
      );
      if (person.disabled_at !== null) throw new SsoRefused('this account is disabled', person.id);

      await teams.applyProviderRoles(person, mappedRoles(settings, groupsOf(claims, settings.groupsClaim)), ip);
      const teamId = await accounts.homeTeam(person);
      const actor = { person_id: person.id, email: person.email };
      if (created)
        await audit.team({ accountId: teamId, action: 'sso.person_created', actor, ip, summary: `${email} (${name})` });
      await audit.team({
        accountId: teamId,
        action: 'sso.sign_in',
        actor,
        ip,
        summary: `${email} via ${settings.issuer}`,
      });
      return { person, teamId, returnTo: login.return_to };
    },
  };
}

export type SingleSignOnService = ReturnType<typeof createSingleSignOnService>;
