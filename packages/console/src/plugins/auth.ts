import { hasSvc1Headers, TOO_MANY_ATTEMPTS } from '@palisade/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor, PersonRow } from '../db/schema.js';
import { AppError, badRequest, notFound, permissionRequired, unauthorized } from '../errors.js';
import type { LimitVerdict } from './rate-limits.js';

export const SESSION_COOKIE = 'pl_session';

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts as: a person in one team (db/schema-teams.ts, `Actor`); `id` is the team's. */
    account: Actor | null;
    /** The signed-in person's row, on session requests (their password, two-factor, sessions). */
    person: PersonRow | null;
    sessionId: string | null;
  }
}

/** The header a session request names the team it acts in with (docs/teams.md). */
export const TEAM_HEADER = 'x-palisade-team';

/** The team the request names, if any: a positive integer id, else 400 naming the header. */
export function namedTeam(request: FastifyRequest): number | undefined {
  if (request.routeOptions.config.teamFromParam) {
    const { id } = request.params as { id: string };
    if (!/^[1-9][0-9]{0,15}$/.test(id)) throw notFound('team');
    return Number(id);
  }
  const value = request.headers[TEAM_HEADER];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !/^[1-9][0-9]{0,15}$/.test(value))
    throw badRequest('X-Palisade-Team: expected a team id (a positive integer)');
  return Number(value);
}

function isHttps(request: FastifyRequest): boolean {
  return request.protocol === 'https' || request.server.config.publicUrl?.startsWith('https://') === true;
}

/** The `Set-Cookie` value of a session cookie; an empty value with max-age 0 clears it. */
export function sessionCookie(request: FastifyRequest, value: string, maxAgeS: number): string {
  const secure = isHttps(request) ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAgeS}${secure}`;
}

export function readCookie(request: FastifyRequest, name: string): string | null {
  const header = request.headers.cookie;
  if (!header) return null;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

/** The Bearer credential: null without an Authorization header, '' when it is not a Bearer one. */
export function bearer(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match ? match[1]! : '';
}

export function tooManyAttempts(resetS: number): AppError {
  return new AppError(429, TOO_MANY_ATTEMPTS, {}, { 'retry-after': String(resetS) });
}

/** Session cookie → request.person and request.account (in the team the request names, else the session's), or 401; a team the person is not in is 404. */
export async function requireSession(request: FastifyRequest) {
  const sessionId = readCookie(request, SESSION_COOKIE);
  const team = namedTeam(request);
  const found = sessionId
    ? await request.server.services.accounts.sessionAccount(sessionId, request.ip, team)
    : undefined;
  if (found === 'not_member') throw notFound('team');
  if (!sessionId || !found) throw unauthorized('sign in first');
  request.account = found.actor;
  request.person = found.person;
  request.sessionId = sessionId;
}

/** A personal access token (120 requests a minute each) → request.account, or 401/429. */
export async function requireToken(request: FastifyRequest, reply: FastifyReply) {
  const raw = bearer(request);
  if (raw === null) throw unauthorized('missing token: send Authorization: Bearer svc_…');
  const { limits } = request.server;
  const count = (tokenId: number) => limits.consume('token', String(tokenId));
  // A lookup kept in memory is confirmed against the changes published so far while the request is
  // counted (services/coherence/token-cache.ts); counted in the database, by the counting statement.
  const changeOf = limits.readsChangeCounter ? changeRead : undefined;
  const found = raw ? await request.server.services.tokens.authenticate(raw, count, changeOf) : undefined;
  if (!found) throw unauthorized('invalid or revoked token');
  admit(request, reply, found.lookup.account, found.also);
}

const changeRead = (verdict: LimitVerdict) => verdict.change;

/** The rate-limit headers on every answer to a token; 429 past the limit, else the account is the request's. */
function admit(request: FastifyRequest, reply: FastifyReply, account: Actor, verdict: LimitVerdict) {
  reply.headers({
    'x-ratelimit-limit': verdict.limit,
    'x-ratelimit-remaining': verdict.remaining,
    'x-ratelimit-reset': Math.ceil(request.server.clock() / 1000) + verdict.resetS,
  });
  if (!verdict.allowed)
    throw new AppError(
      429,
      'rate limit exceeded: 120 requests per minute per token',
      {},
      { 'retry-after': String(verdict.resetS) },
    );
  request.account = inOwnTeam(request, account);
}

/** A token or a signing key acts in its own team only: naming another is 404 (docs/teams.md). */
function inOwnTeam(request: FastifyRequest, account: Actor): Actor {
  const team = namedTeam(request);
  if (team !== undefined && team !== account.id) throw notFound('team');
  return account;
}

/**
 * `requireToken` as a callback hook (the v1 routes'): a token kept in memory and counted in this
 * process (one console on SQLite) is settled in this turn, without a promise; everything else
 * takes `requireToken`. Same checks, same answers.
 */
export function tokenHook(request: FastifyRequest, reply: FastifyReply, done: (err?: Error) => void) {
  const raw = bearer(request);
  const consumeNow = request.server.limits.consumeNow;
  const found = raw && consumeNow ? request.server.services.tokens.fromMemory(raw) : undefined;
  if (!found || !consumeNow) {
    requireToken(request, reply).then(() => done(), done);
    return;
  }
  admit(request, reply, found.account, consumeNow('token', String(found.tokenId)));
  done();
}

/** Dashboard routes that also take the v1 token form as a Bearer header. */
export async function requireSessionOrToken(request: FastifyRequest, reply: FastifyReply) {
  if (request.headers.authorization !== undefined) return requireToken(request, reply);
  return requireSession(request);
}

export function requireAdmin(request: FastifyRequest) {
  if (request.account?.role !== 'admin') throw permissionRequired('console.admin', 'this needs an admin account');
}

/** What the SVC1 verifier needs of a request: method, path without query, headers, the raw body, the client IP. */
export function signedRequest(request: FastifyRequest) {
  return {
    method: request.method,
    path: request.url.split('?')[0]!,
    headers: request.headers,
    rawBody: request.rawBody,
    ip: request.ip,
  };
}

/** Session cookie, or an SVC1-signed request when X-SVC headers are present. */
export async function requireSessionOrSigned(request: FastifyRequest) {
  if (hasSvc1Headers(request.headers)) {
    request.account = inOwnTeam(request, await request.server.services.signing.verify(signedRequest(request)));
    return;
  }
  return requireSession(request);
}

/** `GET /api/servers`: session, personal token (Bearer) or a signed request. */
export async function requireAnyCredential(request: FastifyRequest, reply: FastifyReply) {
  if (hasSvc1Headers(request.headers)) return requireSessionOrSigned(request);
  return requireSessionOrToken(request, reply);
}
