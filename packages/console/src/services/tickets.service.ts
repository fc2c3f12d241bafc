import { randomInt } from 'node:crypto';
import type { Actor, Database } from '../db/schema.js';
import { AppError, badRequest, notFound } from '../errors.js';
import { findProduct } from '../repositories/products.repository.js';
import {
  findTicket,
  insertTicket,
  insertTicketMessage,
  listTicketMessages,
  listTickets,
  updateTicket,
} from '../repositories/tickets.repository.js';
import type { PageRequest } from '../validation.js';
import type { NotificationsService, TicketNotification } from './notifications.service.js';

const REF_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';

export function newTicketRef(): string {
  let ref = 'T-';
  for (let i = 0; i < 6; i += 1) ref += REF_ALPHABET[randomInt(REF_ALPHABET.length)];
  return ref;
}

type TicketRow = NonNullable<Awaited<ReturnType<typeof findTicket>>>;

function ticketView(row: TicketRow & { account_email?: string | null }) {
  return {
    id: row.id,
    ref: row.ref,
    product_id: row.product_id,
    subject: row.subject,
    status: row.status,
    created_at: row.created_at,
    updated_at: row.updated_at,
    ...(row.account_email !== undefined ? { account_email: row.account_email ?? '' } : {}),
  };
}

function excerpt(text: string): string {
  return text.length > 280 ? `${text.slice(0, 277)}…` : text;
}

export function createTicketsService({
  db,
  clock,
  notifications,
}: {
  db: Database;
  clock: () => number;
  notifications: NotificationsService;
}) {
  /** The ticket for this viewer: its owner, or any ticket for an admin acting as one. */
  async function requireTicket(id: number, owner: number | null) {
    const ticket = await findTicket(db, id, owner);
    if (!ticket) throw notFound('ticket');
    return ticket;
  }

  async function detail(ticket: TicketRow) {
    const messages = await listTicketMessages(db, ticket.id);
    return {
      ...ticketView(ticket),
      messages: messages.map((m) => ({
        id: m.id,
        author_role: m.author_role,
        author_person_id: m.author_person_id === null ? null : Number(m.author_person_id),
        author_name: m.author_name,
        body: m.body,
        created_at: m.created_at,
      })),
    };
  }

  /** Writes the activity and its notification in one transaction: both happen or neither. */
  async function activity(
    ticket: TicketRow,
    work: (trx: Database, now: number) => Promise<void>,
    note: Omit<TicketNotification, 'ticket_ref'>,
  ) {
    await db.transaction().execute(async (trx) => {
      const now = clock();
      await work(trx, now);
      await notifications.enqueue(trx, ticket.account_id, { ...note, ticket_ref: ticket.ref });
    });
  }

  return {
    async open(account: Actor, input: { product_id: number; subject: string; message: string }) {
      if (!(await findProduct(db, account.id, input.product_id)))
        throw badRequest('product_id: no product with this id on your account');
      let created: TicketRow | undefined;
      await db.transaction().execute(async (trx) => {
        const now = clock();
        created = await insertTicket(trx, {
          account_id: account.id,
          product_id: input.product_id,
          ref: newTicketRef(),
          subject: input.subject,
          status: 'open',
          created_at: now,
          updated_at: now,
        });
        await insertTicketMessage(trx, {
          ticket_id: created.id,
          author_id: account.id,
          author_person_id: account.person_id,
          author_role: 'user',
          body: input.message,
          created_at: now,
        });
        await notifications.enqueue(trx, account.id, {
          kind: 'ticket.created',
          title: `Ticket ${created.ref} opened: ${input.subject}`,
          body: excerpt(input.message),
          ticket_ref: created.ref,
        });
      });
      return detail(created!);
    },

    /** A page of tickets (docs/api.md, "Lists that page"). */
    async list(filter: { accountId?: number; status?: 'open' | 'closed' }, page: PageRequest) {
      const { items, next_cursor, total } = await listTickets(db, filter, page);
      return { tickets: items.map(ticketView), next_cursor, total };
    },

    async get(id: number, owner: number | null) {
      return detail(await requireTicket(id, owner));
    },

    async reply(id: number, owner: number | null, author: Actor, body: string) {
      const ticket = await requireTicket(id, owner);
      const role = owner === null ? 'admin' : 'user';
      await activity(
        ticket,
        async (trx, now) => {
          await insertTicketMessage(trx, {
            ticket_id: ticket.id,
            author_id: author.id,
            author_person_id: author.person_id,
            author_role: role,
            body,
            created_at: now,
          });
          // A reply to a closed ticket reopens it.
          await updateTicket(trx, ticket.id, { status: 'open', updated_at: now });
        },
        {
          kind: 'ticket.reply',
          title: `${role === 'admin' ? 'Support' : 'You'} replied on ${ticket.ref}: ${ticket.subject}`,
          body: excerpt(body),
        },
      );
      return detail(await requireTicket(id, owner));
    },

    async setStatus(id: number, owner: number | null, status: 'open' | 'closed') {
      const ticket = await requireTicket(id, owner);
      if (ticket.status === status) throw new AppError(409, `the ticket is already ${status}`);
      await activity(ticket, (trx, now) => updateTicket(trx, ticket.id, { status, updated_at: now }), {
        kind: status === 'closed' ? 'ticket.closed' : 'ticket.reopened',
        title: `Ticket ${ticket.ref} ${status === 'closed' ? 'closed' : 'reopened'}: ${ticket.subject}`,
        body: status === 'closed' ? 'The ticket was closed. Reply to reopen it.' : 'The ticket was reopened.',
      });
      return detail(await requireTicket(id, owner));
    },
  };
}

export type TicketsService = ReturnType<typeof createTicketsService>;
