import { type Migration, sql } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * Delivery that one endpoint cannot stall (docs/decisions.md, "Notification delivery"): each
 * webhook keeps a count of failures in a row and its last success, so endpoints known to answer
 * are served first; notifications
 * of an account without a webhook are `parked` (not polled) until one is set; an index finds an
 * account's queued rows for the per-endpoint bound and for postponing a failing endpoint's queue.
 */
export const notificationDelivery: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .alterTable('account_webhooks')
      .addColumn('failures', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema.alterTable('account_webhooks').addColumn('last_success_at', 'bigint').execute();
    await db.schema
      .createIndex('notifications_account_queue')
      .on('notifications')
      .columns(['account_id', 'status', 'next_attempt_at'])
      .execute();
    await sql`UPDATE notifications SET status = 'parked'
      WHERE status = 'queued' AND account_id NOT IN (SELECT account_id FROM account_webhooks)`.execute(db);
  },
};
