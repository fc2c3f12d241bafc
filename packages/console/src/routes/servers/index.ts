import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.js';
import { requireSession, requireSessionOrToken } from '../../plugins/auth.js';
import { parseId } from '../../validation.js';

export default async function serverRoutes(app: FastifyInstance) {
  app.get('/api/servers', { preHandler: requireSessionOrToken }, async (request) => ({
    data: { servers: await app.services.fleet.list(request.account!.id) },
  }));

  app.get<{ Params: { id: string } }>('/api/servers/:id', { preHandler: requireSession }, async (request) => {
    const id = parseId(request.params.id);
    if (id === null) throw notFound('server');
    return { data: { server: await app.services.fleet.detail(request.account!.id, id) } };
  });
}
