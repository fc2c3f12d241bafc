/** Users see their own tickets; admins answer everyone's through /api/admin/tickets. */
export type TicketScope = 'user' | 'admin';

export const ticketsBase = (scope: TicketScope) => (scope === 'admin' ? '/api/admin/tickets' : '/api/tickets');
/** Every ticket read sits under `['tickets']`; a write refreshes them all. */
export const allTicketsKey = ['tickets'];
export const ticketsKey = (scope: TicketScope) => [...allTicketsKey, scope];
export const ticketKey = (scope: TicketScope, id: number) => [...ticketsKey(scope), id];
