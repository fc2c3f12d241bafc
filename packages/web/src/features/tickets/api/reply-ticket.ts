import type { DashboardData } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse, text } from '../../../lib/schema';
import { allTicketsKey, type TicketScope, ticketsBase } from './scope';

export const replyInput = z.object({ message: text({ min: 1, max: 10_000 }) });

export const checkReply = (values: { message: string }) => parse(replyInput, values);

export const replyTicket = (input: { scope: TicketScope; id: number; message: string }) =>
  request<DashboardData<'ticket'>>('POST', `${ticketsBase(input.scope)}/${input.id}/messages`, {
    body: { message: input.message },
  });

export const useReplyTicket = () => useMutation(replyTicket, () => invalidate(allTicketsKey));
