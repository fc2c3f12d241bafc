import { createTokenRequest } from '@palisade/protocol';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.js';
import { requireSession } from '../../plugins/auth.js';
import { parseId, parseInput } from '../../validation.js';

export default async function tokenRoutes(app: FastifyInstance) {
  app.get('/api/tokens', { preHandler: requireSession, config: { read: 'person' } }, async (request) => ({
    data: { tokens: await app.services.tokens.list(request.account!.id, request.account!.person_id) },
  }));

  app.post('/api/tokens', { preHandler: requireSession, config: { permission: 'person' } }, async (request, reply) => {
    const { name } = parseInput(createTokenRequest, request.body, 'body');
    const token = await app.services.tokens.create(request.account!.id, request.account!.person_id, name);
    return reply.status(201).send({ data: token });
  });

  app.delete<{ Params: { id: string } }>(
    '/api/tokens/:id',
    { preHandler: requireSession, config: { permission: 'person' } },
    async (request) => {
      const id = parseId(request.params.id);
      if (id === null) throw notFound('token');
      await app.services.tokens.revoke(request.account!.id, request.account!.person_id, id);
      return { data: { revoked: true } };
    },
  );
}
