import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { readCookie, SESSION_COOKIE, tooManyAttempts } from '../../plugins/auth.js';
import type { LimitName } from '../../plugins/rate-limits.js';
import { accountView, LoginRefused } from '../../services/accounts.service.js';
import { PASSWORD_MAX, PASSWORD_MIN } from '../../services/passwords.js';
import { parseInput } from '../../validation.js';

const registerBody = z.object({
  email: z.email('expected an email address').max(254, 'at most 254 characters'),
  password: z
    .string()
    .min(PASSWORD_MIN, `at least ${PASSWORD_MIN} characters`)
    .max(PASSWORD_MAX, `at most ${PASSWORD_MAX} characters`),
  name: z.string().trim().min(1, 'must not be empty').max(100, 'at most 100 characters'),
});

const loginBody = z.object({
  email: z.string().max(254, 'at most 254 characters'),
  password: z.string().max(1024, 'at most 1024 characters'),
});

function isHttps(request: FastifyRequest): boolean {
  return request.protocol === 'https' || request.server.config.publicUrl?.startsWith('https://') === true;
}

function sessionCookie(request: FastifyRequest, value: string, maxAgeS: number): string {
  const secure = isHttps(request) ? '; Secure' : '';
  return `${SESSION_COOKIE}=${value}; HttpOnly; SameSite=Lax; Path=/; Max-Age=${maxAgeS}${secure}`;
}

async function limitPerIp(request: FastifyRequest, name: LimitName) {
  const verdict = await request.server.limits.consume(name, request.ip);
  if (!verdict.allowed) throw tooManyAttempts(verdict.resetS);
}

async function signIn(request: FastifyRequest, reply: FastifyReply, accountId: number) {
  const session = await request.server.services.accounts.startSession(accountId);
  reply.header('set-cookie', sessionCookie(request, session.id, session.maxAgeS));
}

export default async function authRoutes(app: FastifyInstance) {
  app.post('/api/auth/register', async (request, reply) => {
    await limitPerIp(request, 'register');
    const body = parseInput(registerBody, request.body, 'body');
    const account = await app.services.accounts.create(body);
    await signIn(request, reply, account.id);
    return reply.status(201).send({ data: { account: accountView(account) } });
  });

  app.post('/api/auth/login', async (request, reply) => {
    await limitPerIp(request, 'login');
    const body = parseInput(loginBody, request.body, 'body');
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
