import { createKeyRequest } from '@palisade/protocol';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.js';
import { requireSession } from '../../plugins/auth.js';
import { parseId, parseInput } from '../../validation.js';

/** SVC1 signing keys `svck_…`: the raw key is in the POST answer once; only its hash is kept. */
export default async function keyRoutes(app: FastifyInstance) {
  app.get('/api/keys', { preHandler: requireSession, config: { read: 'person' } }, async (request) => ({
    data: { keys: await app.services.signing.list(request.account!.id, request.account!.person_id) },
  }));

  app.post('/api/keys', { preHandler: requireSession, config: { permission: 'person' } }, async (request, reply) => {
    const { name } = parseInput(createKeyRequest, request.body, 'body');
    return reply
      .status(201)
      .send({ data: await app.services.signing.create(request.account!.id, request.account!.person_id, name) });
  });

  app.delete<{ Params: { id: string } }>(
    '/api/keys/:id',
    { preHandler: requireSession, config: { permission: 'person' } },
    async (request) => {
      const id = parseId(request.params.id);
      if (id === null) throw notFound('key');
      await app.services.signing.revoke(request.account!.id, request.account!.person_id, id);
      return { data: { revoked: true } };
    },
  );
}
