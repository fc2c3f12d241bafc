import type { Insertable } from 'kysely';
import type { Database, NotificationAttemptsTable, NotificationsTable } from '../db/schema.js';

export async function findWebhook(db: Database, accountId: number) {
  return db.selectFrom('account_webhooks').selectAll().where('account_id', '=', accountId).executeTakeFirst();
}

export async function upsertWebhook(
  db: Database,
  webhook: { account_id: number; url: string; secret_enc: string; updated_at: number },
) {
  await db
    .insertInto('account_webhooks')
    .values(webhook)
    .onConflict((oc) => oc.column('account_id').doUpdateSet({ url: webhook.url, updated_at: webhook.updated_at }))
    .execute();
}

export async function deleteWebhook(db: Database, accountId: number) {
  const result = await db.deleteFrom('account_webhooks').where('account_id', '=', accountId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertNotification(db: Database, notification: Insertable<NotificationsTable>) {
  await db.insertInto('notifications').values(notification).execute();
}

/** Queued notifications due now whose claim (if any) has expired. */
export async function dueNotifications(db: Database, now: number, limit: number) {
  return db
    .selectFrom('notifications')
    .selectAll()
    .where('status', '=', 'queued')
    .where('next_attempt_at', '<=', now)
    .where('locked_until', '<=', now)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Claims one notification until `until`; false when another process claimed it first. */
export async function claimNotification(db: Database, id: number, now: number, until: number) {
  const result = await db
    .updateTable('notifications')
    .set({ locked_until: until })
    .where('id', '=', id)
    .where('status', '=', 'queued')
    .where('locked_until', '<=', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function finishAttempt(
  db: Database,
  id: number,
  fields: Pick<NotificationsTable, 'status' | 'attempts' | 'next_attempt_at' | 'locked_until' | 'delivered_at'>,
) {
  await db.updateTable('notifications').set(fields).where('id', '=', id).execute();
}

export async function insertAttempt(db: Database, attempt: Insertable<NotificationAttemptsTable>) {
  await db.insertInto('notification_attempts').values(attempt).execute();
}

export async function listAttempts(db: Database, accountId: number, limit: number) {
  return db
    .selectFrom('notification_attempts')
    .innerJoin('notifications', 'notifications.id', 'notification_attempts.notification_id')
    .select([
      'notification_attempts.id',
      'notification_attempts.notification_id',
      'notifications.kind',
      'notifications.status as status',
      'notification_attempts.at as created_at',
      'notification_attempts.url',
      'notification_attempts.status_code as response_status',
      'notification_attempts.error',
      'notification_attempts.duration_ms',
    ])
    .where('notification_attempts.account_id', '=', accountId)
    .orderBy('notification_attempts.at', 'desc')
    .orderBy('notification_attempts.id', 'desc')
    .limit(limit)
    .execute();
}
