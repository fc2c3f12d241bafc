import { openTicketRequest, ticketReplyRequest } from '@palisade/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, notFound } from '../../errors.js';
import { requireAdmin, requireSession, requireSessionOrSigned } from '../../plugins/auth.js';
import { parseId, parseInput, parsePage } from '../../validation.js';

function ticketId(request: FastifyRequest<{ Params: { id: string } }>): number {
  const id = parseId(request.params.id);
  if (id === null) throw notFound('ticket');
  return id;
}

function statusFilter(raw: unknown): 'open' | 'closed' | undefined {
  if (raw === undefined) return undefined;
  if (raw === 'open' || raw === 'closed') return raw;
  throw badRequest('status: expected open or closed');
}

/** Tickets: the account's own (cookie or SVC1-signed), and the admins' view of all of them. */
export default async function ticketRoutes(app: FastifyInstance) {
  const own = { preHandler: requireSessionOrSigned, config: { signed: true, permission: 'tickets.write' } as const };
  type WithId = { Params: { id: string } };

  type ListQuery = { Querystring: { status?: string; cursor?: string; limit?: string } };

  app.get<ListQuery>('/api/tickets', own, async (request) => ({
    data: await app.services.tickets.list(
      { accountId: request.account!.id, status: statusFilter(request.query.status) },
      parsePage(request.query),
    ),
  }));

  app.post('/api/tickets', own, async (request, reply) => {
    const body = parseInput(openTicketRequest, request.body, 'body');
    return reply.status(201).send({ data: { ticket: await app.services.tickets.open(request.account!, body) } });
  });

  app.get<WithId>('/api/tickets/:id', own, async (request) => ({
    data: { ticket: await app.services.tickets.get(ticketId(request), request.account!.id) },
  }));

  app.post<WithId>('/api/tickets/:id/messages', own, async (request, reply) => {
    const id = ticketId(request);
    const { message: text } = parseInput(ticketReplyRequest, request.body, 'body');
    return reply
      .status(201)
      .send({ data: { ticket: await app.services.tickets.reply(id, request.account!.id, request.account!, text) } });
  });

  for (const [action, status] of [
    ['close', 'closed'],
    ['reopen', 'open'],
  ] as const) {
    app.post<WithId>(`/api/tickets/:id/${action}`, own, async (request) => ({
      data: { ticket: await app.services.tickets.setStatus(ticketId(request), request.account!.id, status) },
    }));
  }

  // Admins answer tickets of every account.
  const admin = {
    preHandler: [requireSession, async (request: FastifyRequest) => requireAdmin(request)],
    config: { permission: 'console.admin', read: 'console.admin' } as const,
  };

  app.get<ListQuery>('/api/admin/tickets', admin, async (request) => ({
    data: await app.services.tickets.list({ status: statusFilter(request.query.status) }, parsePage(request.query)),
  }));

  app.get<WithId>('/api/admin/tickets/:id', admin, async (request) => ({
    data: { ticket: await app.services.tickets.get(ticketId(request), null) },
  }));

  app.post<WithId>('/api/admin/tickets/:id/messages', admin, async (request, reply) => {
    const id = ticketId(request);
    const { message: text } = parseInput(ticketReplyRequest, request.body, 'body');
    return reply
      .status(201)
      .send({ data: { ticket: await app.services.tickets.reply(id, null, request.account!, text) } });
  });

  for (const [action, status] of [
    ['close', 'closed'],
    ['reopen', 'open'],
  ] as const) {
    app.post<WithId>(`/api/admin/tickets/:id/${action}`, admin, async (request) => ({
      data: { ticket: await app.services.tickets.setStatus(ticketId(request), null, status) },
    }));
  }
}
