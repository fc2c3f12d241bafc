import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * Who wrote a ticket message (docs/tickets.md): `author_id` names the team, since teams; the person
 * goes beside it. Additive: the release before it writes messages without the column (null, shown
 * as the team), and older rows stay null (docs/decisions.md, "Ticket messages written before their
 * author was kept").
 */
export const ticketMessageAuthors: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('ticket_messages')
      .addColumn('author_person_id', 'bigint', (c) => c.references('people.id').onDelete('set null'))
      .execute();
    // Closing an account sets its messages' author to null: found by this index, not by a scan.
    await db.schema
      .createIndex('ticket_messages_author_person')
      .on('ticket_messages')
      .column('author_person_id')
      .execute();
  },
};
