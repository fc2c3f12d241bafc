import type { Database } from '../db/schema.js';

const listed = ['id', 'name', 'last4', 'created_at', 'last_used_at'] as const;

export async function insertSigningKey(
  db: Database,
  key: { account_id: number; person_id: number; name: string; key_hash: string; last4: string; created_at: number },
) {
  return db
    .insertInto('signing_keys')
    .values({ ...key, last_used_at: null })
    .returning(listed)
    .executeTakeFirstOrThrow();
}

export async function listSigningKeys(db: Database, accountId: number, personId: number) {
  return db
    .selectFrom('signing_keys')
    .select(listed)
    .where('account_id', '=', accountId)
    .where('person_id', '=', personId)
    .orderBy('id', 'desc')
    .execute();
}

export async function countSigningKeys(db: Database, accountId: number, personId: number) {
  const row = await db
    .selectFrom('signing_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('account_id', '=', accountId)
    .where('person_id', '=', personId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function deleteSigningKey(db: Database, accountId: number, personId: number, id: number) {
  const result = await db
    .deleteFrom('signing_keys')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** The key, whatever its person's state, so a failure can be recorded on its team's stream. */
export async function findSigningKey(db: Database, keyHash: string) {
  return db
    .selectFrom('signing_keys')
    .select([
      'signing_keys.id as key_id',
      'signing_keys.account_id',
      'signing_keys.person_id',
      'signing_keys.last_used_at as key_last_used_at',
    ])
    .where('signing_keys.key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** A member's signing keys in the team (removed, or their role changed). */
export async function deleteMemberSigningKeys(db: Database, teamId: number, personId: number) {
  await db.deleteFrom('signing_keys').where('account_id', '=', teamId).where('person_id', '=', personId).execute();
}

export async function touchSigningKey(db: Database, id: number, now: number) {
  await db
    .updateTable('signing_keys')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - 60_000)]))
    .execute();
}

/** Records (key, timestamp, nonce); false when it was seen before: a replay. One insert, so every process agrees. */
export async function recordNonce(db: Database, keyId: number, ts: number, nonce: string, now: number) {
  const result = await db
    .insertInto('svc1_nonces')
    .values({ key_id: keyId, ts, nonce, created_at: now })
    .onConflict((oc) => oc.columns(['key_id', 'ts', 'nonce']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

/** False when this key already had a write accepted with this signature (on any console process). */
export async function recordSignature(db: Database, keyId: number, signature: string, now: number) {
  const result = await db
    .insertInto('svc1_signatures')
    .values({ key_id: keyId, signature, created_at: now })
    .onConflict((oc) => oc.columns(['key_id', 'signature']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function deleteNoncesBefore(db: Database, before: number) {
  await db.deleteFrom('svc1_nonces').where('created_at', '<', before).execute();
  await db.deleteFrom('svc1_signatures').where('created_at', '<', before).execute();
}
