import { type DashboardData, ticketReplyRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { allTicketsKey, type TicketScope, ticketsBase } from './scope';

export const checkReply = (values: { message: string }) => checkRequest(ticketReplyRequest, values);

export const replyTicket = (input: { scope: TicketScope; id: number; message: string }) =>
  request<DashboardData<'ticket'>>('POST', `${ticketsBase(input.scope)}/${input.id}/messages`, {
    body: { message: input.message },
  });

export const useReplyTicket = () => useMutation(replyTicket, () => invalidate(allTicketsKey));
