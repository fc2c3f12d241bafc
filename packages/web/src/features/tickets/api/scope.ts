import type { Ticket, TicketMessage, TicketWithMessages } from '../../../lib/wire';

/** Users see their own tickets; admins answer everyone's through /api/admin/tickets. */
export type TicketScope = 'user' | 'admin';

export const ticketsBase = (scope: TicketScope) => (scope === 'admin' ? '/api/admin/tickets' : '/api/tickets');
/** Every ticket read sits under `['tickets']`; a write refreshes them all. */
export const allTicketsKey = ['tickets'];
export const ticketsKey = (scope: TicketScope) => [...allTicketsKey, scope];
export const ticketKey = (scope: TicketScope, id: number) => [...ticketsKey(scope), id];

/** The ticket routes are new; accept the ticket bare or wrapped, messages inside or beside it. */
export function normalizeTicket(body: unknown): TicketWithMessages {
  const record = (body ?? {}) as Record<string, unknown>;
  const ticket = (record.ticket ?? record) as Ticket & { messages?: TicketMessage[] };
  const messages = (ticket.messages ?? record.messages ?? []) as TicketMessage[];
  return { ...ticket, messages };
}

export function normalizeTickets(body: unknown): Ticket[] {
  if (Array.isArray(body)) return body as Ticket[];
  const record = (body ?? {}) as Record<string, unknown>;
  return (Array.isArray(record.tickets) ? record.tickets : Array.isArray(record.items) ? record.items : []) as Ticket[];
}
