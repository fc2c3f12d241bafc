import type { Database, NewAccount } from '../db/schema.js';

export async function insertAccount(db: Database, account: NewAccount) {
  return db.insertInto('accounts').values(account).returningAll().executeTakeFirstOrThrow();
}

export async function findAccountByEmail(db: Database, email: string) {
  return db.selectFrom('accounts').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findAccountById(db: Database, id: number) {
  return db.selectFrom('accounts').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countAdmins(db: Database) {
  const row = await db
    .selectFrom('accounts')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('role', '=', 'admin')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function setAccountDisabled(db: Database, id: number, disabledAt: number | null) {
  await db.updateTable('accounts').set({ disabled_at: disabledAt }).where('id', '=', id).execute();
}

export async function setAccountPermissions(db: Database, id: number, permissions: string) {
  await db.updateTable('accounts').set({ permissions }).where('id', '=', id).execute();
}

export async function setAccountPassword(db: Database, id: number, passwordHash: string) {
  await db.updateTable('accounts').set({ password_hash: passwordHash }).where('id', '=', id).execute();
}

/** Sets a new hash only if the stored one is still `expected` (a password change in between wins); true if it did. */
export async function replaceAccountPassword(db: Database, id: number, expected: string, passwordHash: string) {
  const result = await db
    .updateTable('accounts')
    .set({ password_hash: passwordHash })
    .where('id', '=', id)
    .where('password_hash', '=', expected)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * The account and everything it owns, in one transaction. Servers and tickets go first (they refer
 * to the account's products without a cascade); the account's row then takes the rest with it
 * through `on delete cascade`: products, sessions, tokens, keys, webhooks, notifications, alerts,
 * security events, recovery codes and waiting sign-ins.
 */
export async function deleteAccountAndData(db: Database, id: number) {
  await db.transaction().execute(async (trx) => {
    await trx.deleteFrom('servers').where('account_id', '=', id).execute();
    await trx.deleteFrom('tickets').where('account_id', '=', id).execute();
    await trx.deleteFrom('enrolment_tokens').where('account_id', '=', id).execute();
    await trx.deleteFrom('accounts').where('id', '=', id).execute();
  });
}
