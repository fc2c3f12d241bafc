import { loginRequest, registerRequest, twoFactorLoginRequest } from '@palisade/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { PersonRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { readCookie, SESSION_COOKIE, sessionCookie, tooManyAttempts } from '../../plugins/auth.js';
import { addressKey, type LimitName } from '../../plugins/rate-limits.js';
import { accountView, LoginRefused } from '../../services/accounts.service.js';
import { SsoRefused } from '../../services/single-sign-on.service.js';
import { parseInput } from '../../validation.js';

/** Counted per address: an IPv6 address by its /64 (addressKey). */
async function limitPerIp(request: FastifyRequest, name: LimitName) {
  const verdict = await request.server.limits.consume(name, addressKey(request.ip));
  if (!verdict.allowed) throw tooManyAttempts(verdict.resetS);
}

/** A session for the person in their first team; answers the person as the seed showed the account. */
async function signIn(request: FastifyRequest, reply: FastifyReply, person: PersonRow, teamId?: number) {
  const { accounts } = request.server.services;
  const team = teamId ?? (await accounts.homeTeam(person));
  const session = await accounts.startSession(person.id, team, {
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
  });
  reply.header('set-cookie', sessionCookie(request, session.id, session.maxAgeS));
  const actor = await accounts.memberActor(team, person.id);
  return accountView(actor!);
}

export default async function authRoutes(app: FastifyInstance) {
  app.post('/api/auth/register', { config: { permission: 'public' } }, async (request, reply) => {
    await limitPerIp(request, 'register');
    const body = parseInput(registerRequest, request.body, 'body');
    const { person, teamId } = await app.services.accounts.create(body);
    const account = await signIn(request, reply, person, teamId);
    return reply.status(201).send({ data: { account } });
  });

  app.post('/api/auth/login', { config: { permission: 'public' } }, async (request, reply) => {
    await limitPerIp(request, 'login');
    const body = parseInput(loginRequest, request.body, 'body');
    let account: Awaited<ReturnType<typeof app.services.accounts.login>>;
    try {
      account = await app.services.accounts.login(body.email, body.password);
    } catch (err) {
      if (err instanceof LoginRefused) {
        await app.services.securityEvents.record({
          account_id: null,
          person_id: err.personId,
          kind: 'login_failed',
          reason: err.why,
          method: request.method,
          path: '/api/auth/login',
          ip: request.ip,
        });
      }
      throw err;
    }
    // Two-factor on: the password was right, but no session until the code is (docs/security.md).
    if (account.totp_enabled_at !== null)
      return { data: await app.services.accountSecurity.beginChallenge(account.id) };
    return { data: { account: await signIn(request, reply, account) } };
  });

  // The code step counts against the same per-IP limit as the password step, and against a limit
  // of its own per account (codes from many addresses on one account), and a lock after too many
  // wrong codes (accountSecurity.completeChallenge; docs/security.md, "Account security").
  app.post('/api/auth/login/two-factor', { config: { permission: 'public' } }, async (request, reply) => {
    await limitPerIp(request, 'login');
    const body = parseInput(twoFactorLoginRequest, request.body, 'body');
    const account = await app.services.accountSecurity.completeChallenge(
      body.challenge,
      body.code,
      { method: request.method, path: '/api/auth/login/two-factor', ip: request.ip },
      async (accountId) => {
        const verdict = await app.limits.consume('two_factor', `account:${accountId}`);
        if (!verdict.allowed)
          throw new AppError(
            429,
            `code: too many codes tried on this account; try again in ${verdict.resetS} s`,
            {},
            { 'retry-after': String(verdict.resetS) },
          );
      },
    );
    return { data: { account: await signIn(request, reply, account) } };
  });

  // Single sign-on with the console's OpenID provider (docs/teams.md, "Single sign-on").
  app.get('/api/auth/oidc', { config: { permission: 'public' } }, async () => ({
    data: app.services.singleSignOn.status(),
  }));

  app.get('/api/auth/oidc/start', { config: { permission: 'public' } }, async (request, reply) => {
    await limitPerIp(request, 'login');
    const query = request.query as { return_to?: unknown };
    const returnTo = typeof query.return_to === 'string' ? query.return_to : undefined;
    return reply.redirect(await app.services.singleSignOn.start(returnTo), 302);
  });

  // Refusals go back to the sign-in page, which shows the reason; the security events keep it too.
  app.get('/api/auth/oidc/callback', { config: { permission: 'public' } }, async (request, reply) => {
    await limitPerIp(request, 'login');
    const callbackUrl = new URL(app.config.oidc?.redirectUri ?? 'http://oidc.invalid/');
    callbackUrl.search = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    try {
      const { person, teamId, returnTo } = await app.services.singleSignOn.finish(callbackUrl, request.ip);
      await signIn(request, reply, person, teamId);
      return reply.redirect(returnTo, 302);
    } catch (err) {
      if (!(err instanceof SsoRefused)) throw err;
      await app.services.securityEvents.record({
        account_id: null,
        person_id: err.personId,
        kind: 'login_failed',
        reason: `single sign-on: ${err.reason}`.slice(0, 500),
        method: request.method,
        path: '/api/auth/oidc/callback',
        ip: request.ip,
      });
      return reply.redirect(`/dashboard/sign-in?sso_error=${encodeURIComponent(err.reason)}`, 302);
    }
  });

  // The dashboard asks who is signed in without logging a 401 for visitors who are not.
  app.get('/api/auth/session', async (request) => {
    const sessionId = readCookie(request, SESSION_COOKIE);
    const found = sessionId ? await app.services.accounts.sessionAccount(sessionId) : undefined;
    return { data: { account: found && found !== 'not_member' ? accountView(found.actor) : null } };
  });

  app.post('/api/auth/logout', { config: { permission: 'public' } }, async (request, reply) => {
    const sessionId = readCookie(request, SESSION_COOKIE);
    if (sessionId) await app.services.accounts.endSession(sessionId);
    reply.header('set-cookie', sessionCookie(request, '', 0));
    return { data: { logged_out: true } };
  });
}
