import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { allTicketsKey, type TicketScope, ticketsBase } from './scope';

/** Closing and reopening: the same call with a different last segment. */
export const setTicketOpen = (input: { scope: TicketScope; id: number; open: boolean }) =>
  request<DashboardData<'ticket'>>(
    'POST',
    `${ticketsBase(input.scope)}/${input.id}/${input.open ? 'reopen' : 'close'}`,
    { body: {} },
  );

export const useSetTicketOpen = () => useMutation(setTicketOpen, () => invalidate(allTicketsKey));
