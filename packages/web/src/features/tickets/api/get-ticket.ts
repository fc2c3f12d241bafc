import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import { type TicketScope, ticketKey, ticketsBase } from './scope';

export const getTicket = async (scope: TicketScope, id: number) =>
  (await request<DashboardData<'ticket'>>('GET', `${ticketsBase(scope)}/${id}`)).ticket;

/** The thread; refreshed every 15 s so an answer shows up without reloading. */
export const useTicket = (scope: TicketScope, id: number) =>
  useQuery(ticketKey(scope, id), () => getTicket(scope, id), { intervalMs: 15_000 });
