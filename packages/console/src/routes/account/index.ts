import type { FastifyInstance } from 'fastify';
import { requireSession } from '../../plugins/auth.js';
import { accountView } from '../../services/accounts.service.js';

export default async function accountRoutes(app: FastifyInstance) {
  app.get('/api/account/me', { preHandler: requireSession }, async (request) => ({
    data: accountView(request.account!),
  }));
}
