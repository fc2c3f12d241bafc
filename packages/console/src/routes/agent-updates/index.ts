import { hasSvc1Headers, startRolloutRequest } from '@palisade/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound } from '../../errors.js';
import { requireSessionOrSigned } from '../../plugins/auth.js';
import type { UpdateActor } from '../../services/agent-updates.service.js';
import { parseId, parseInput } from '../../validation.js';

function rolloutId(request: FastifyRequest<{ Params: { id: string } }>): number {
  const id = parseId(request.params.id);
  if (id === null) throw notFound('rollout');
  return id;
}

/** The account behind the session or the SVC1 signature, as the audit log names it. */
function actorOf(request: FastifyRequest): UpdateActor {
  const account = request.account!;
  return {
    accountId: account.id,
    permissions: account.permissions,
    kind: hasSvc1Headers(request.headers) ? 'signing_key' : 'session',
    id: account.person_id,
    label: account.email,
    ip: request.ip,
  };
}

/** Agent updates in waves (docs/fleet.md, "Agent updates"): a session or an SVC1-signed request. */
export default async function agentUpdateRoutes(app: FastifyInstance) {
  const own = { preHandler: requireSessionOrSigned, config: { signed: true, permission: 'servers.write' } as const };
  const updates = () => app.services.agentUpdates;
  type WithId = { Params: { id: string } };
  const where = (request: FastifyRequest) => ({ method: request.method, path: request.url.split('?')[0]! });

  app.get('/api/agent-updates', own, async (request) => ({ data: await updates().list(actorOf(request)) }));

  app.post('/api/agent-updates', own, async (request, reply) => {
    const body = parseInput(startRolloutRequest, request.body ?? {}, 'body');
    const rollout = await updates().start(actorOf(request), body, where(request));
    return reply.status(201).send({ data: { rollout } });
  });

  app.get<WithId>('/api/agent-updates/:id', own, async (request) => ({
    data: await updates().get(actorOf(request), rolloutId(request)),
  }));

  app.post<WithId>('/api/agent-updates/:id/cancel', own, async (request) => ({
    data: { rollout: await updates().cancel(actorOf(request), rolloutId(request), where(request)) },
  }));
}
