import type { Insertable } from 'kysely';
import type { Database, TicketMessagesTable, TicketsTable } from '../db/schema.js';
import type { PageRequest } from '../validation.js';
import { keysetPage } from './paging.js';

export async function insertTicket(db: Database, ticket: Insertable<TicketsTable>) {
  return db.insertInto('tickets').values(ticket).returningAll().executeTakeFirstOrThrow();
}

export async function insertTicketMessage(db: Database, message: Insertable<TicketMessagesTable>) {
  return db.insertInto('ticket_messages').values(message).returningAll().executeTakeFirstOrThrow();
}

/** One ticket; `accountId` null means any account's (admins). */
export async function findTicket(db: Database, id: number, accountId: number | null) {
  let query = db.selectFrom('tickets').selectAll().where('id', '=', id);
  if (accountId !== null) query = query.where('account_id', '=', accountId);
  return query.executeTakeFirst();
}

/** A page of tickets, latest activity first, with how many match in all; no `accountId` means every account's. */
export async function listTickets(
  db: Database,
  filter: { accountId?: number; status?: 'open' | 'closed' },
  page: PageRequest,
) {
  let query = db
    .selectFrom('tickets')
    .innerJoin('accounts', 'accounts.id', 'tickets.account_id')
    .selectAll('tickets')
    .select(['accounts.email as account_email']);
  if (filter.accountId !== undefined) query = query.where('tickets.account_id', '=', filter.accountId);
  if (filter.status) query = query.where('tickets.status', '=', filter.status);
  return keysetPage(query, { key: 'tickets.updated_at', id: 'tickets.id' }, page, (t) => [t.updated_at, t.id]);
}

export async function listTicketMessages(db: Database, ticketId: number) {
  return db.selectFrom('ticket_messages').selectAll().where('ticket_id', '=', ticketId).orderBy('id').execute();
}

export async function updateTicket(
  db: Database,
  id: number,
  fields: { status?: 'open' | 'closed'; updated_at: number },
) {
  await db.updateTable('tickets').set(fields).where('id', '=', id).execute();
}
