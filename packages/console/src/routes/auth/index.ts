import { loginRequest, registerRequest, twoFactorLoginRequest } from '@palisade/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import { readCookie, SESSION_COOKIE, sessionCookie, tooManyAttempts } from '../../plugins/auth.js';
import { addressKey, type LimitName } from '../../plugins/rate-limits.js';
import { accountView, LoginRefused } from '../../services/accounts.service.js';
import { parseInput } from '../../validation.js';

/** Counted per address: an IPv6 address by its /64 (addressKey). */
async function limitPerIp(request: FastifyRequest, name: LimitName) {
  const verdict = await request.server.limits.consume(name, addressKey(request.ip));
  if (!verdict.allowed) throw tooManyAttempts(verdict.resetS);
}

async function signIn(request: FastifyRequest, reply: FastifyReply, accountId: number) {
  const session = await request.server.services.accounts.startSession(accountId, {
    ip: request.ip,
    userAgent: request.headers['user-agent'] ?? null,
  });
  reply.header('set-cookie', sessionCookie(request, session.id, session.maxAgeS));
}

export default async function authRoutes(app: FastifyInstance) {
  app.post('/api/auth/register', async (request, reply) => {
    await limitPerIp(request, 'register');
    const body = parseInput(registerRequest, request.body, 'body');
    const account = await app.services.accounts.create(body);
    await signIn(request, reply, account.id);
    return reply.status(201).send({ data: { account: accountView(account) } });
  });

  app.post('/api/auth/login', async (request, reply) => {
    await limitPerIp(request, 'login');
    const body = parseInput(loginRequest, request.body, 'body');
    let account: Awaited<ReturnType<typeof app.services.accounts.login>>;
    try {
      account = await app.services.accounts.login(body.email, body.password);
    } catch (err) {
      if (err instanceof LoginRefused) {
        await app.services.securityEvents.record({
          account_id: err.accountId,
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
    await signIn(request, reply, account.id);
    return { data: { account: accountView(account) } };
  });

  // The code step counts against the same per-IP limit as the password step, and against a limit
  // of its own per account (codes from many addresses on one account), and a lock after too many
  // wrong codes (accountSecurity.completeChallenge; docs/security.md, "Account security").
  app.post('/api/auth/login/two-factor', async (request, reply) => {
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
    await signIn(request, reply, account.id);
    return { data: { account: accountView(account) } };
  });

  // The dashboard asks who is signed in without logging a 401 for visitors who are not.
  app.get('/api/auth/session', async (request) => {
    const sessionId = readCookie(request, SESSION_COOKIE);
    const account = sessionId ? await app.services.accounts.sessionAccount(sessionId) : undefined;
    return { data: { account: account ? accountView(account) : null } };
  });

  app.post('/api/auth/logout', async (request, reply) => {
    const sessionId = readCookie(request, SESSION_COOKIE);
    if (sessionId) await app.services.accounts.endSession(sessionId);
    reply.header('set-cookie', sessionCookie(request, '', 0));
    return { data: { logged_out: true } };
  });
}
