import { sql } from 'kysely';
import type { Database } from '../db/schema.js';

/** The trivial query readiness asks (docs/deploy.md, "Health and readiness"): the database answers at all. */
export async function pingDatabase(db: Database): Promise<void> {
  await sql`SELECT 1`.execute(db);
}

/**
 * How many notifications wait in the outbox and when the oldest was queued, for the metrics page: a
 * read-only count, never a claim (the outbox itself is notifications.repository.ts).
 */
export async function outboxBacklog(db: Database): Promise<{ queued: number; oldestCreatedAt: number | null }> {
  const row = await db
    .selectFrom('notifications')
    .select((eb) => [eb.fn.countAll<number>().as('queued'), eb.fn.min('created_at').as('oldest')])
    .where('status', '=', 'queued')
    .executeTakeFirst();
  return {
    queued: Number(row?.queued ?? 0),
    oldestCreatedAt: row?.oldest === null || row?.oldest === undefined ? null : Number(row.oldest),
  };
}
