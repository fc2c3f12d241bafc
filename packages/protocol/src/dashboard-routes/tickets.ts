import type { RequestBodyName } from '../requests/index.js';
import { type DashboardRoute, paging, type RouteAuth } from './route.js';

/** Tickets: the account's own, and the admins' view of every account's. */
export const ticketRoutes: DashboardRoute[] = [
  ...ticketRoutesAt('/api/tickets', 'sessionOrSigned', 'The account'),
  {
    method: 'post',
    path: '/api/tickets',
    summary: 'Open a ticket about a product',
    auth: 'sessionOrSigned',
    status: 201,
    answer: 'ticket',
    errors: [400, 401],
  },
  ...ticketRoutesAt('/api/admin/tickets', 'admin', 'Every account'),
];

function ticketRoutesAt(base: string, auth: RouteAuth, whose: string): DashboardRoute[] {
  const status = {
    status: { description: 'open or closed; all when absent', schema: { type: 'string', enum: ['open', 'closed'] } },
  };
  const forbidden = auth === 'admin' ? [403] : [];
  return [
    {
      method: 'get',
      path: base,
      summary: `${whose}'s tickets, last updated first, a page at a time`,
      auth,
      status: 200,
      answer: 'tickets',
      errors: [400, 401, ...forbidden],
      query: { ...status, ...paging },
    },
    {
      method: 'get',
      path: `${base}/{id}`,
      summary: 'A ticket with its messages',
      auth,
      status: 200,
      answer: 'ticket',
      errors: [401, ...forbidden, 404],
    },
    {
      method: 'post',
      path: `${base}/{id}/messages`,
      summary: 'Reply (reopens a closed ticket)',
      auth,
      status: 201,
      answer: 'ticket',
      errors: [400, 401, ...forbidden, 404],
    },
    {
      method: 'post',
      path: `${base}/{id}/close`,
      summary: 'Close the ticket',
      auth,
      status: 200,
      answer: 'ticket',
      errors: [401, ...forbidden, 404, 409],
    },
    {
      method: 'post',
      path: `${base}/{id}/reopen`,
      summary: 'Reopen the ticket',
      auth,
      status: 200,
      answer: 'ticket',
      errors: [401, ...forbidden, 404, 409],
    },
  ];
}

/** The body each write of this area takes, by `<method> <path>` (schemas in packages/protocol/src/requests). */
export const ticketRequestBodies: Record<string, RequestBodyName> = {
  'post /api/tickets': 'OpenTicket',
  'post /api/tickets/{id}/messages': 'TicketReply',
  'post /api/admin/tickets/{id}/messages': 'TicketReply',
};
