import { benchmarkRequest } from '@palisade/protocol';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.js';
import { requireSession } from '../../plugins/auth.js';
import { parseId, parseInput } from '../../validation.js';

/** The dashboard's view of benchmark runs: every status, log and checks included. */
export default async function benchmarkRoutes(app: FastifyInstance) {
  app.get<{ Params: { id: string } }>(
    '/api/servers/:id/benchmarks',
    { preHandler: requireSession },
    async (request) => {
      const id = parseId(request.params.id);
      if (id === null) throw notFound('server');
      return { data: { runs: await app.services.benchmarks.list(request.account!.id, id) } };
    },
  );

  app.post<{ Params: { id: string } }>(
    '/api/servers/:id/benchmarks',
    { preHandler: requireSession, config: { permission: 'servers.write' } },
    async (request, reply) => {
      const id = parseId(request.params.id);
      if (id === null) throw notFound('server');
      const { label } = parseInput(benchmarkRequest, request.body, 'body');
      return reply
        .status(201)
        .send({ data: { run: await app.services.benchmarks.create(request.account!.id, id, label) } });
    },
  );
}
