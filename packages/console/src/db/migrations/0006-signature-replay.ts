import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * Signatures of signed writes already accepted: the SVC1 payload does not cover the nonce, so a
 * captured write re-sent with a new nonce is refused by its signature (docs/signing.md, "Replay").
 */
export const signatureReplay: Migration = {
  async up(db: AnyDb) {
    await db.schema
      .createTable('svc1_signatures')
      .addColumn('key_id', 'bigint', (c) => c.notNull().references('signing_keys.id').onDelete('cascade'))
      .addColumn('signature', 'text', (c) => c.notNull())
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addPrimaryKeyConstraint('svc1_signatures_pk', ['key_id', 'signature'])
      .execute();
    await db.schema.createIndex('svc1_signatures_created').on('svc1_signatures').column('created_at').execute();
  },
};
