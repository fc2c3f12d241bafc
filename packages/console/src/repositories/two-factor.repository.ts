import type { Database } from '../db/schema.js';

export async function setPendingTotp(db: Database, personId: number, sealed: string) {
  await db.updateTable('people').set({ totp_pending_enc: sealed }).where('id', '=', personId).execute();
}

/** Turns two-factor on with the confirmed secret and replaces the recovery codes, in one transaction. */
export async function enableTotp(
  db: Database,
  personId: number,
  change: { sealed: string; step: number; now: number; codeHashes: string[] },
) {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('people')
      .set({
        totp_secret_enc: change.sealed,
        totp_pending_enc: null,
        totp_enabled_at: change.now,
        totp_last_step: change.step,
      })
      .where('id', '=', personId)
      .execute();
    await trx.deleteFrom('recovery_codes').where('person_id', '=', personId).execute();
    await trx
      .insertInto('recovery_codes')
      .values(
        change.codeHashes.map((code_hash) => ({
          person_id: personId,
          code_hash,
          used_at: null,
          created_at: change.now,
        })),
      )
      .execute();
  });
}

export async function disableTotp(db: Database, personId: number) {
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('people')
      .set({ totp_secret_enc: null, totp_pending_enc: null, totp_enabled_at: null, totp_last_step: null })
      .where('id', '=', personId)
      .execute();
    await trx.deleteFrom('recovery_codes').where('person_id', '=', personId).execute();
  });
}

/**
 * Takes a time step for the account when it is later than the last one taken: one atomic update,
 * so the same code is refused the second time even by another console process.
 */
export async function claimTotpStep(db: Database, personId: number, step: number) {
  const result = await db
    .updateTable('people')
    .set({ totp_last_step: step })
    .where('id', '=', personId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Marks an unused recovery code used; false when it is unknown or was used already. */
export async function useRecoveryCode(db: Database, personId: number, codeHash: string, now: number) {
  const result = await db
    .updateTable('recovery_codes')
    .set({ used_at: now })
    .where('person_id', '=', personId)
    .where('code_hash', '=', codeHash)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function countUnusedRecoveryCodes(db: Database, personId: number) {
  const row = await db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('person_id', '=', personId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function insertLoginChallenge(
  db: Database,
  challenge: { id_hash: string; person_id: number; created_at: number; expires_at: number },
) {
  await db.insertInto('login_challenges').values(challenge).execute();
}

export async function findLoginChallenge(db: Database, idHash: string, now: number) {
  return db
    .selectFrom('login_challenges')
    .selectAll()
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Counts a wrong code against the challenge; answers the failures so far. */
export async function countChallengeFailure(db: Database, idHash: string) {
  const row = await db
    .updateTable('login_challenges')
    .set((eb) => ({ failures: eb('failures', '+', 1) }))
    .where('id_hash', '=', idHash)
    .returning('failures')
    .executeTakeFirst();
  return Number(row?.failures ?? 0);
}

export async function deleteLoginChallenge(db: Database, idHash: string) {
  await db.deleteFrom('login_challenges').where('id_hash', '=', idHash).execute();
}

export async function deleteExpiredLoginChallenges(db: Database, now: number) {
  await db.deleteFrom('login_challenges').where('expires_at', '<=', now).execute();
}

/** Every sign-in of the person waiting for its code (a new password makes them stale). */
export async function deletePersonLoginChallenges(db: Database, personId: number) {
  await db.deleteFrom('login_challenges').where('person_id', '=', personId).execute();
}
