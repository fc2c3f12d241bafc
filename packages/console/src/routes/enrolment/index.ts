import { createEnrolmentTokenSchema, ENROLMENT_MAX_USES, plainText } from '@palisade/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { notFound } from '../../errors.js';
import { requireSession } from '../../plugins/auth.js';
import { parseId, parseInput } from '../../validation.js';
import { consoleUrl } from '../console-url.js';

// The protocol's shape, with messages that say what is expected.
const createBody = createEnrolmentTokenSchema
  .extend({
    product_id: z.number('expected an integer').int('expected an integer').positive('expected a positive id'),
    max_uses: z
      .number('expected an integer')
      .int('expected an integer')
      .min(1, 'at least 1')
      .max(ENROLMENT_MAX_USES, `at most ${ENROLMENT_MAX_USES}`)
      .optional(),
    expires_at: z.number('expected epoch milliseconds').int('expected epoch milliseconds').optional(),
    name: plainText(z.string('expected a string')).trim().max(100, 'at most 100 characters').optional(),
  })
  .strict();

/** Enrolment tokens for the one-line install (docs/api.md, "Enrolment tokens"). */
export default async function enrolmentRoutes(app: FastifyInstance) {
  app.get('/api/enrolment-tokens', { preHandler: requireSession }, async (request) => ({
    data: { tokens: await app.services.enrolment.list(request.account!.id) },
  }));

  app.post('/api/enrolment-tokens', { preHandler: requireSession }, async (request, reply) => {
    const body = parseInput(createBody, request.body, 'body');
    const token = await app.services.enrolment.create(request.account!.id, body, consoleUrl(request));
    return reply.status(201).send({ data: token });
  });

  app.delete<{ Params: { id: string } }>(
    '/api/enrolment-tokens/:id',
    { preHandler: requireSession },
    async (request) => {
      const id = parseId(request.params.id);
      if (id === null) throw notFound('enrolment token');
      await app.services.enrolment.revoke(request.account!.id, id);
      return { data: { revoked: true } };
    },
  );
}
