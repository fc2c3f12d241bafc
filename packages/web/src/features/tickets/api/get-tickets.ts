import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import { normalizeTickets, type TicketScope, ticketsBase, ticketsKey } from './scope';

export const getTickets = async (scope: TicketScope) =>
  normalizeTickets(await request<unknown>('GET', ticketsBase(scope)));

export const useTickets = (scope: TicketScope) =>
  useQuery(ticketsKey(scope), () => getTickets(scope), { intervalMs: 30_000 });
