import type { Migration } from 'kysely';
import { type Dialect, withId } from './helpers.js';

/**
 * Enrolment tokens for the one-line install (docs/agent.md, "One-line install"): stored as their
 * SHA-256, scoped to one product, with a use count against `max_uses`, an expiry and a revocation time.
 */
export const enrolmentTokens = (dialect: Dialect): Migration => ({
  async up(db) {
    await withId(dialect, db.schema.createTable('enrolment_tokens'))
      .addColumn('account_id', 'bigint', (c) => c.notNull().references('accounts.id').onDelete('cascade'))
      .addColumn('product_id', 'bigint', (c) => c.notNull().references('products.id').onDelete('cascade'))
      .addColumn('name', 'text', (c) => c.notNull())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('last4', 'text', (c) => c.notNull())
      .addColumn('max_uses', 'integer', (c) => c.notNull())
      .addColumn('uses', 'integer', (c) => c.notNull())
      .addColumn('expires_at', 'bigint', (c) => c.notNull())
      .addColumn('revoked_at', 'bigint')
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .execute();
    await db.schema.createIndex('enrolment_tokens_account').on('enrolment_tokens').column('account_id').execute();
  },
});
