import type { DashboardData } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse, pattern, text } from '../../../lib/schema';
import { ticketsKey } from './scope';

export const createTicketInput = z.object({
  product_id: pattern(/^\d+$/, 'Choose a product.'),
  subject: text({ min: 1, max: 200 }),
  message: text({ min: 1, max: 10_000 }),
});

export type CreateTicketValues = z.input<typeof createTicketInput>;

export const checkCreateTicket = (values: CreateTicketValues) => parse(createTicketInput, values);

export const createTicket = async (values: CreateTicketValues) =>
  (
    await request<DashboardData<'ticket'>>('POST', '/api/tickets', {
      body: { product_id: Number(values.product_id), subject: values.subject, message: values.message },
    })
  ).ticket;

export const useCreateTicket = (onDone: (ticket: { id: number }) => void) =>
  useMutation(createTicket, (ticket) => {
    invalidate(ticketsKey('user'));
    onDone(ticket);
  });
