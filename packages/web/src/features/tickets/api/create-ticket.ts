import { type DashboardData, type OpenTicketRequest, openTicketRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest, numberOf } from '../../../lib/schema';
import { ticketsKey } from './scope';

export interface CreateTicketValues {
  product_id: string;
  subject: string;
  message: string;
}

/** The form's values as the console takes them: the product's id as a number. */
export const createTicketBody = (values: CreateTicketValues): OpenTicketRequest => ({
  product_id: numberOf(values.product_id) as number,
  subject: values.subject,
  message: values.message,
});

export const checkCreateTicket = (values: CreateTicketValues) =>
  checkRequest(openTicketRequest, createTicketBody(values));

export const createTicket = async (body: OpenTicketRequest) =>
  (await request<DashboardData<'ticket'>>('POST', '/api/tickets', { body })).ticket;

export const useCreateTicket = (onDone: (ticket: { id: number }) => void) =>
  useMutation(createTicket, (ticket) => {
    invalidate(ticketsKey('user'));
    onDone(ticket);
  });
