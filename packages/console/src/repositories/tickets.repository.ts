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
    .selectAll('tickets')
    // The team's first owner (docs/teams.md): who a console admin writes back to.
    .select((eb) =>
      eb
        .selectFrom('team_members')
        .innerJoin('people', 'people.id', 'team_members.person_id')
        .select('people.email')
        .whereRef('team_members.account_id', '=', 'tickets.account_id')
        .where('team_members.role', '=', 'owner')
        .orderBy('team_members.created_at')
        .orderBy('people.id')
        .limit(1)
        .as('account_email'),
    );
  if (filter.accountId !== undefined) query = query.where('tickets.account_id', '=', filter.accountId);
  if (filter.status) query = query.where('tickets.status', '=', filter.status);
  return keysetPage(query, { key: 'tickets.updated_at', id: 'tickets.id' }, page, (t) => [t.updated_at, t.id]);
}

/**
 * A ticket's messages, oldest first, each with its author's name: the person's, or the team's the
 * message was written in when the person is not known (written before migration 0030, or since closed).
 */
export async function listTicketMessages(db: Database, ticketId: number) {
  return db
    .selectFrom('ticket_messages')
    .leftJoin('people', 'people.id', 'ticket_messages.author_person_id')
    .leftJoin('accounts', 'accounts.id', 'ticket_messages.author_id')
    .selectAll('ticket_messages')
    .select((eb) => eb.fn.coalesce('people.name', 'accounts.name', eb.val('')).as('author_name'))
    .where('ticket_messages.ticket_id', '=', ticketId)
    .orderBy('ticket_messages.id')
    .execute();
}

export async function updateTicket(
  db: Database,
  id: number,
  fields: { status?: 'open' | 'closed'; updated_at: number },
) {
  await db.updateTable('tickets').set(fields).where('id', '=', id).execute();
}
