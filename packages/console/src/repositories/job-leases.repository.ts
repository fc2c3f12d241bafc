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

export async function releaseLease(db: Database, name: string, holder: string) {
  await db.deleteFrom('job_leases').where('name', '=', name).where('holder', '=', holder).execute();
}
