import { jsonSchemaOf, v1OpenApi, v1Responses } from '@palisade/protocol';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.js';
import { tokenHook } from '../../plugins/auth.js';
import { actingTeam } from '../../services/accounts.service.js';
import { parseId } from '../../validation.js';

/** The public read-only API: Bearer svc_ tokens only, the session cookie is ignored. */
export default async function v1Routes(app: FastifyInstance) {
  // The description of the API is public; it is registered beside the token-guarded routes.
  const description = JSON.stringify(v1OpenApi(app.config.publicUrl ?? undefined));
  app.register(async (open) => {
    open.get('/api/v1/openapi.json', async (_request, reply) =>
      reply.type('application/json; charset=utf-8').send(description),
    );
  });
  app.register(guardedV1Routes);
}

async function guardedV1Routes(app: FastifyInstance) {
  app.addHook('onRequest', tokenHook);

  // Response schemas let Fastify serialize with a compiled stringifier; the shapes are the protocol's.
  const ok = (schema: keyof typeof v1Responses) => ({
    schema: { response: { 200: jsonSchemaOf(v1Responses[schema]) } },
  });

  // The person the token belongs to and the team it acts in, with their role there (docs/teams.md): any role may ask.
  app.get('/api/v1/me', { ...ok('me'), config: { read: 'person' } }, async (request) => {
    const { person_id: id, name, email, role } = request.account!;
    return { data: { id, name, email, role, team: actingTeam(request.account!) } };
  });

  // The answer comes as JSON bytes, from memory while it holds (services/servers/list-cache.ts), and
  // then without a promise: the whole request is served in one turn of the event loop.
  app.get('/api/v1/servers', (request, reply) => {
    const answer = app.services.servers.listAnswer(request.account!.id);
    const send = (body: Buffer) => reply.type('application/json; charset=utf-8').send(body);
    return Buffer.isBuffer(answer) ? send(answer) : answer.then(send);
  });

  app.get<{ Params: { id: string } }>('/api/v1/servers/:id', async (request) => {
    const id = parseId(request.params.id);
    if (id === null) throw notFound('server');
    return { data: await app.services.servers.detail(request.account!.id, id) };
  });

  app.get<{ Params: { id: string } }>('/api/v1/servers/:id/benchmarks', ok('benchmarks'), async (request) => {
    const id = parseId(request.params.id);
    if (id === null) throw notFound('server');
    return { data: { benchmarks: await app.services.servers.doneBenchmarks(request.account!.id, id) } };
  });
}
