import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { badRequest } from '../../errors.js';
import { requireSession, requireSessionOrSigned } from '../../plugins/auth.js';
import { parseInput } from '../../validation.js';

const webhookBody = z.object({
  url: z.string().trim().max(2048, 'at most 2048 characters').url('expected an http(s) URL'),
});

import { accountView } from '../../services/accounts.service.js';

export default async function accountRoutes(app: FastifyInstance) {
  app.get('/api/account/me', { preHandler: requireSessionOrSigned, config: { signed: true } }, async (request) => ({
    data: accountView(request.account!),
  }));

  app.get('/api/account/webhook', { preHandler: requireSession }, async (request) => ({
    data: await app.services.notifications.webhook(request.account!.id),
  }));

  app.put('/api/account/webhook', { preHandler: requireSession }, async (request) => {
    const { url } = parseInput(webhookBody, request.body, 'body');
    return { data: await app.services.notifications.setWebhook(request.account!.id, url) };
  });

  app.delete('/api/account/webhook', { preHandler: requireSession }, async (request) => {
    await app.services.notifications.removeWebhook(request.account!.id);
    return { data: { deleted: true } };
  });

  app.get<{ Querystring: { limit?: string } }>(
    '/api/security/events',
    { preHandler: requireSession },
    async (request) => {
      const raw = request.query.limit ?? '50';
      if (!/^[0-9]{1,3}$/.test(raw) || Number(raw) < 1 || Number(raw) > 200)
        throw badRequest('limit: expected 1 to 200');
      return { data: { events: await app.services.securityEvents.list(request.account!.id, Number(raw)) } };
    },
  );
}
