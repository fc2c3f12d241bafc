import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { usePagedQuery } from '../../../lib/query';
import { type TicketScope, ticketsBase, ticketsKey } from './scope';

export const getTickets = async (scope: TicketScope, cursor: string | null) => {
  const query = cursor ? `?${new URLSearchParams({ cursor })}` : '';
  const page = await request<DashboardData<'tickets'>>('GET', `${ticketsBase(scope)}${query}`);
  return { items: page.tickets, next_cursor: page.next_cursor, total: page.total };
};

/** Latest activity first, 50 a page; the pages loaded are refreshed every 30 s. */
export const useTickets = (scope: TicketScope) =>
  usePagedQuery(ticketsKey(scope), (cursor) => getTickets(scope, cursor), { intervalMs: 30_000 });
