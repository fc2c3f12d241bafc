import type { Migration } from 'kysely';
import { sql } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * An e-mail channel receives nothing but one confirmation mail until its recipient opens the link
 * in it (docs/alerts.md, "E-mail channels"): `confirmed_at` is when that happened (other kinds are
 * confirmed when added), `confirm_token_hash` the SHA-256 of the link's single-use token and
 * `confirm_sent_at` when it was sent. Channels that existed before are taken as confirmed: their
 * owners added them and alerts reach them today (docs/security.md, "Accounts and alert channels").
 */
export const alertChannelConfirmation: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('alert_channels').addColumn('confirmed_at', 'bigint').execute();
    await db.schema.alterTable('alert_channels').addColumn('confirm_token_hash', 'text').execute();
    await db.schema.alterTable('alert_channels').addColumn('confirm_sent_at', 'bigint').execute();
    await db.updateTable('alert_channels').set({ confirmed_at: sql`created_at` }).execute();
    await db.schema
      .createIndex('alert_channels_confirm_token')
      .on('alert_channels')
      .column('confirm_token_hash')
      .execute();
  },
};
