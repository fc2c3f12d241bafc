import type { Migration } from 'kysely';
import type { AnyDb } from './helpers.js';

/**
 * When each alert rule last started applying as it is (docs/alerts.md, "Rules"): a rule created,
 * enabled again or given a new condition counts its events (a benchmark run that came out
 * unverified) from then, so turning a rule back on does not send what happened while it was off.
 */
export const alertRuleActivation: Migration = {
  async up(db: AnyDb) {
    await db.schema.alterTable('alert_rules').addColumn('active_since', 'bigint').execute();
  },
};
