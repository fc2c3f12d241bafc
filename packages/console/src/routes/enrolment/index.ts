import { createEnrolmentTokenRequest } from '@palisade/protocol';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.js';
import { requireSession } from '../../plugins/auth.js';
import { readReleaseKey } from '../../release-key.js';
import { parseId, parseInput } from '../../validation.js';
import { consoleUrl } from '../console-url.js';

/** Enrolment tokens for the one-line install (docs/api.md, "Enrolment tokens"). */
export default async function enrolmentRoutes(app: FastifyInstance) {
  app.get('/api/enrolment-tokens', { preHandler: requireSession }, async (request) => ({
    data: { tokens: await app.services.enrolment.list(request.account!.id) },
  }));

  app.post(
    '/api/enrolment-tokens',
    { preHandler: requireSession, config: { permission: 'servers.write' } },
    async (request, reply) => {
      const body = parseInput(createEnrolmentTokenRequest, request.body, 'body');
      // The line pins the release key of the artifacts this console serves (null: unsigned).
      const releaseKey = readReleaseKey(app.config.artifactsDir);
      const token = await app.services.enrolment.create(request.account!.id, body, consoleUrl(request), releaseKey);
      return reply.status(201).send({ data: token });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/enrolment-tokens/:id',
    { preHandler: requireSession, config: { permission: 'servers.write' } },
    async (request) => {
      const id = parseId(request.params.id);
      if (id === null) throw notFound('enrolment token');
      await app.services.enrolment.revoke(request.account!.id, id);
      return { data: { revoked: true } };
    },
  );
}
