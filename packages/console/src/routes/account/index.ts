import { changePasswordRequest, codeRequest, passwordRequest, proofRequest, webhookRequest } from '@palisade/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from '../../errors.js';
import { requireSession, requireSessionOrSigned, sessionCookie, tooManyAttempts } from '../../plugins/auth.js';
import { matchedPath } from '../../plugins/request-guards.js';
import { accountView } from '../../services/accounts.service.js';
import { parseInput, parsePage } from '../../validation.js';

/** The request a security event is recorded for: the route the router matched, not the raw URL. */
const contextOf = (request: FastifyRequest) => ({
  method: request.method,
  path: matchedPath(request),
  ip: request.ip,
});

/**
 * Every check of the password or a code counts against the login limit, per account: a stolen
 * session cookie is not a password oracle from however many addresses (docs/security.md).
 */
async function limitGuesses(request: FastifyRequest) {
  const verdict = await request.server.limits.consume('login', `account:${request.person!.id}`);
  if (!verdict.allowed) throw tooManyAttempts(verdict.resetS);
}

export default async function accountRoutes(app: FastifyInstance) {
  app.get(
    '/api/account/me',
    { preHandler: requireSessionOrSigned, config: { read: 'person', signed: true } },
    async (request) => ({
      data: accountView(request.account!),
    }),
  );

  app.get<{ Querystring: { cursor?: string; limit?: string } }>(
    '/api/account/webhook',
    { preHandler: requireSession },
    async (request) => ({
      data: await app.services.notifications.webhook(request.account!.id, parsePage(request.query)),
    }),
  );

  app.put(
    '/api/account/webhook',
    { preHandler: requireSession, config: { permission: 'settings.write' } },
    async (request) => {
      const { url } = parseInput(webhookRequest, request.body, 'body');
      return { data: await app.services.notifications.setWebhook(request.account!.id, url) };
    },
  );

  app.delete(
    '/api/account/webhook',
    { preHandler: requireSession, config: { permission: 'settings.write' } },
    async (request) => {
      await app.services.notifications.removeWebhook(request.account!.id);
      return { data: { deleted: true } };
    },
  );

  app.get<{ Querystring: { cursor?: string; limit?: string } }>(
    '/api/security/events',
    { preHandler: requireSession, config: { read: 'person' } },
    async (request) => ({
      data: await app.services.securityEvents.list(
        request.account!.id,
        request.account!.person_id,
        parsePage(request.query),
      ),
    }),
  );

  app.post(
    '/api/account/password',
    { preHandler: requireSession, config: { permission: 'person' } },
    async (request) => {
      const body = parseInput(changePasswordRequest, request.body, 'body');
      await limitGuesses(request);
      const ended = await app.services.accountSecurity.changePassword(
        request.person!,
        request.sessionId!,
        body.old_password,
        body.new_password,
        contextOf(request),
      );
      return { data: { changed: true, sessions_ended: ended } };
    },
  );

  app.get('/api/account/sessions', { preHandler: requireSession, config: { read: 'person' } }, async (request) => ({
    data: { sessions: await app.services.accountSecurity.listSessions(request.person!.id, request.sessionId!) },
  }));

  app.delete<{ Params: { id: string } }>(
    '/api/account/sessions/:id',
    { preHandler: requireSession, config: { permission: 'person' } },
    async (request) => {
      if (!/^[0-9a-f]{64}$/.test(request.params.id)) throw badRequest('id: expected a session id (64 hex characters)');
      await app.services.accountSecurity.revokeSession(request.person!.id, request.params.id);
      return { data: { revoked: true } };
    },
  );

  app.post(
    '/api/account/sessions/revoke-others',
    { preHandler: requireSession, config: { permission: 'person' } },
    async (request) => ({
      data: {
        sessions_ended: await app.services.accountSecurity.revokeOtherSessions(
          request.person!,
          request.sessionId!,
          contextOf(request),
        ),
      },
    }),
  );

  app.get('/api/account/two-factor', { preHandler: requireSession, config: { read: 'person' } }, async (request) => ({
    data: await app.services.accountSecurity.twoFactorStatus(request.person!),
  }));

  app.post(
    '/api/account/two-factor/setup',
    { preHandler: requireSession, config: { permission: 'person' } },
    async (request) => {
      const body = parseInput(passwordRequest, request.body, 'body');
      await limitGuesses(request);
      return { data: await app.services.accountSecurity.setupTwoFactor(request.person!, body.password) };
    },
  );

  app.post(
    '/api/account/two-factor/enable',
    { preHandler: requireSession, config: { permission: 'person' } },
    async (request) => {
      const body = parseInput(codeRequest, request.body, 'body');
      await limitGuesses(request);
      const codes = await app.services.accountSecurity.enableTwoFactor(request.person!, body.code, contextOf(request));
      return { data: { enabled: true, recovery_codes: codes } };
    },
  );

  app.post(
    '/api/account/two-factor/disable',
    { preHandler: requireSession, config: { permission: 'person' } },
    async (request) => {
      const body = parseInput(proofRequest, request.body, 'body');
      await limitGuesses(request);
      return { data: await app.services.accountSecurity.disableTwoFactor(request.person!, body, contextOf(request)) };
    },
  );

  app.delete(
    '/api/account',
    { preHandler: requireSession, config: { permission: 'person' } },
    async (request, reply) => {
      const body = parseInput(proofRequest, request.body ?? {}, 'body');
      await limitGuesses(request);
      await app.services.accountSecurity.deleteAccount(request.person!, request.sessionId!, body, contextOf(request));
      reply.header('set-cookie', sessionCookie(request, '', 0));
      return { data: { account_deleted: true } };
    },
  );
}
