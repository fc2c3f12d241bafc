import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/** Alert rules may apply to servers by tag (docs/alerts.md, "Scope"): a JSON array, null for none. */
export const alertRuleTags: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('alert_rules').addColumn('tags', 'text').execute();
  },
};
