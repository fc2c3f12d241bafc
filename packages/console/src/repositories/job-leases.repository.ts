import type { Database } from '../db/schema.js';

/** Takes the named lease when it is free or expired; true when this holder now has it. */
export async function acquireLease(db: Database, name: string, holder: string, now: number, ttlMs: number) {
  const row = await db
    .insertInto('job_leases')
    .values({ name, holder, expires_at: now + ttlMs })
    .onConflict((oc) =>
      oc
        .column('name')
        .doUpdateSet({ holder, expires_at: now + ttlMs })
        .where((eb) => eb.or([eb('job_leases.expires_at', '<=', now), eb('job_leases.holder', '=', holder)])),
    )
    .returning('holder')
    .executeTakeFirst();
  return row?.holder === holder;
}

/** Extends a lease this holder still has; false when it expired and another process took it. */
export async function renewLease(db: Database, name: string, holder: string, now: number, ttlMs: number) {
  const result = await db
    .updateTable('job_leases')
    .set({ expires_at: now + ttlMs })
    .where('name', '=', name)
    .where('holder', '=', holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function releaseLease(db: Database, name: string, holder: string) {
  await db.deleteFrom('job_leases').where('name', '=', name).where('holder', '=', holder).execute();
}

/** Frees every lease this holder has (a process stopping), so another process need not wait for them to expire. */
export async function releaseLeasesOf(db: Database, holder: string) {
  await db.deleteFrom('job_leases').where('holder', '=', holder).execute();
}

export interface JobRound {
  holder: string;
  started_at: number;
  finished_at: number;
}

/** The last finished round of `name`, by any process, or null before the first. */
export async function lastRound(db: Database, name: string): Promise<JobRound | null> {
  const row = await db
    .selectFrom('job_rounds')
    .select(['holder', 'started_at', 'finished_at'])
    .where('name', '=', name)
    .executeTakeFirst();
  return row ? { holder: row.holder, started_at: Number(row.started_at), finished_at: Number(row.finished_at) } : null;
}

export async function recordRound(db: Database, name: string, round: JobRound) {
  await db
    .insertInto('job_rounds')
    .values({ name, ...round })
    .onConflict((oc) => oc.column('name').doUpdateSet(round))
    .execute();
}
