import { fleetAddressQuery, fleetEntriesQuery, fleetEntryInput, fleetPolicyInput } from '@palisade/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { notFound } from '../../errors.js';
import { requireSession } from '../../plugins/auth.js';
import type { FleetActor } from '../../services/fleet-protection/index.js';
import { parseId, parseInput, parsePage } from '../../validation.js';

function idOf(request: FastifyRequest<{ Params: { id: string } }>, what: string): number {
  const id = parseId(request.params.id);
  if (id === null) throw notFound(what);
  return id;
}

/** The signed-in account, as the audit log names it. */
function actorOf(request: FastifyRequest): FleetActor {
  const account = request.account!;
  return {
    accountId: account.id,
    permissions: account.permissions,
    kind: 'session',
    id: account.person_id,
    label: account.email,
    ip: request.ip,
  };
}

/** Fleet policies and the fleet lists (docs/protection.md, "Fleet policies"; docs/api.md). */
export default async function fleetRoutes(app: FastifyInstance) {
  const fleet = () => app.services.fleet;

  app.get('/api/fleet/policies', { preHandler: requireSession }, async (request) => ({
    data: { policies: await fleet().listPolicies(request.account!.id) },
  }));

  app.post(
    '/api/fleet/policies',
    { preHandler: requireSession, config: { permission: 'control.edit' } },
    async (request, reply) => {
      const input = parseInput(fleetPolicyInput, request.body, 'body');
      return reply.status(201).send({ data: { policy: await fleet().createPolicy(actorOf(request), input) } });
    },
  );

  app.patch<{ Params: { id: string } }>(
    '/api/fleet/policies/:id',
    { preHandler: requireSession, config: { permission: 'control.edit' } },
    async (request) => {
      const id = idOf(request, 'fleet policy');
      const input = parseInput(fleetPolicyInput, request.body, 'body');
      return { data: { policy: await fleet().updatePolicy(actorOf(request), id, input) } };
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/fleet/policies/:id',
    { preHandler: requireSession, config: { permission: 'control.edit' } },
    async (request) => {
      await fleet().deletePolicy(actorOf(request), idOf(request, 'fleet policy'));
      return { data: { deleted: true } };
    },
  );

  app.get('/api/fleet/entries', { preHandler: requireSession }, async (request) => {
    const { list, cursor, limit } = parseInput(fleetEntriesQuery, request.query, 'query');
    return { data: await fleet().listEntries(request.account!.id, list, parsePage({ cursor, limit })) };
  });

  app.post(
    '/api/fleet/entries',
    { preHandler: requireSession, config: { permission: 'control.edit' } },
    async (request, reply) => {
      const input = parseInput(fleetEntryInput, request.body, 'body');
      return reply.status(201).send({ data: { entry: await fleet().addEntry(actorOf(request), input) } });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/api/fleet/entries/:id',
    { preHandler: requireSession, config: { permission: 'control.edit' } },
    async (request) => ({
      data: await fleet().liftEntry(actorOf(request), idOf(request, 'fleet entry')),
    }),
  );

  app.get<{ Params: { id: string } }>(
    '/api/fleet/servers/:id/bans',
    { preHandler: requireSession },
    async (request) => ({
      data: await fleet().serverBans(request.account!.id, idOf(request, 'server')),
    }),
  );

  app.get('/api/fleet/addresses', { preHandler: requireSession }, async (request) => {
    const { ip } = parseInput(fleetAddressQuery, request.query, 'query');
    return { data: await fleet().address(request.account!.id, ip) };
  });

  app.delete(
    '/api/fleet/addresses',
    { preHandler: requireSession, config: { permission: 'control.edit' } },
    async (request) => {
      const { ip } = parseInput(fleetAddressQuery, request.query, 'query');
      return { data: await fleet().liftAddress(actorOf(request), ip) };
    },
  );
}
