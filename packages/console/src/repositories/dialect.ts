import { PostgresAdapter } from 'kysely';
import type { Database } from '../db/schema.js';

/** True on PostgreSQL: for the few statements whose best form differs between the two dialects. */
export function isPostgres(db: Database): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}
