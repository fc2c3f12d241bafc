import { createHmac, randomBytes } from 'node:crypto';
import type { Database } from '../db/schema.js';
import { badRequest, notFound } from '../errors.js';
import { type GuardedClient, OutboundError } from '../outbound/guarded-client.js';
import {
  claimNotification,
  deleteWebhook,
  dueNotifications,
  findWebhook,
  finishAttempt,
  insertAttempt,
  insertNotification,
  listAttempts,
  upsertWebhook,
} from '../repositories/notifications.repository.js';
import type { SecretBox } from '../secrets.js';

export interface TicketNotification {
  kind: 'ticket.created' | 'ticket.reply' | 'ticket.closed' | 'ticket.reopened';
  title: string;
  body: string;
  ticket_ref: string;
}

/** Retries: 10 s, doubling, at most an hour apart; given up 26 hours after the notification was queued. */
export const FIRST_RETRY_MS = 10_000;
export const MAX_RETRY_MS = 3600_000;
export const GIVE_UP_AFTER_MS = 26 * 3600_000;
const CLAIM_MS = 60_000;
const DELIVERY_TIMEOUT_MS = 10_000;

/** `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">`: the receiver recomputes it with its secret. */
export function signatureHeader(secret: string, body: string, unixSeconds: number): string {
  return `t=${unixSeconds},v1=${createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex')}`;
}

export function retryDelay(attempts: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
}

export function createNotificationsService(deps: {
  db: Database;
  clock: () => number;
  outbound: GuardedClient;
  secrets: SecretBox;
}) {
  const { db, clock, outbound, secrets } = deps;

  return {
    /** Queues a notification; call it with the transaction of the activity so both commit together. */
    async enqueue(trx: Database, accountId: number, notification: TicketNotification) {
      const now = clock();
      await insertNotification(trx, {
        account_id: accountId,
        kind: notification.kind,
        payload: JSON.stringify(notification),
        status: 'queued',
        attempts: 0,
        next_attempt_at: now,
        locked_until: 0,
        created_at: now,
        delivered_at: null,
      });
    },

    async webhook(accountId: number) {
      const hook = await findWebhook(db, accountId);
      return { url: hook?.url ?? null, deliveries: await listAttempts(db, accountId, 50) };
    },

    /** Sets the URL (checked by the target policy now, and again at every delivery). The secret is made once per account. */
    async setWebhook(accountId: number, url: string) {
      try {
        await outbound.checkUrl(url);
      } catch (err) {
        if (err instanceof OutboundError) throw badRequest(`url: ${err.message}`);
        throw err;
      }
      const existing = await findWebhook(db, accountId);
      const secret = existing ? secrets.open(existing.secret_enc) : `whsec_${randomBytes(24).toString('base64url')}`;
      await upsertWebhook(db, {
        account_id: accountId,
        url,
        secret_enc: existing?.secret_enc ?? secrets.seal(secret),
        updated_at: clock(),
      });
      return { url, secret };
    },

    async removeWebhook(accountId: number) {
      if (!(await deleteWebhook(db, accountId))) throw notFound('webhook');
    },

    /**
     * One round of the outbox worker: claims due notifications one by one (a claim is a conditional
     * update, so two console processes never send the same one at once), delivers, records the attempt.
     */
    async runOnce(limit = 20): Promise<number> {
      let sent = 0;
      for (const row of await dueNotifications(db, clock(), limit)) {
        const now = clock();
        if (!(await claimNotification(db, row.id, now, now + CLAIM_MS))) continue;
        const hook = await findWebhook(db, row.account_id);
        const attempts = row.attempts + 1;
        let statusCode: number | null = null;
        let error: string | null = null;
        const started = clock();
        if (!hook) {
          error = 'no webhook URL is set for the account; it will be tried again';
        } else {
          try {
            const res = await outbound.request({
              method: 'POST',
              url: hook.url,
              body: row.payload,
              timeoutMs: DELIVERY_TIMEOUT_MS,
              maxBytes: 64 * 1024,
              headers: {
                'content-type': 'application/json',
                'user-agent': 'Palisade-Notifications/1',
                'x-palisade-delivery': String(row.id),
                'x-palisade-event': row.kind,
                'x-palisade-signature': signatureHeader(
                  secrets.open(hook.secret_enc),
                  row.payload,
                  Math.floor(now / 1000),
                ),
              },
            });
            statusCode = res.status;
            if (res.status < 200 || res.status > 299) error = `the endpoint answered HTTP ${res.status}`;
          } catch (err) {
            if (!(err instanceof OutboundError)) throw err;
            error =
              err.kind === 'timeout'
                ? `no answer within ${DELIVERY_TIMEOUT_MS} ms`
                : `could not reach the endpoint: ${err.message}`;
          }
        }
        const finished = clock();
        await insertAttempt(db, {
          notification_id: row.id,
          account_id: row.account_id,
          at: finished,
          url: hook?.url ?? '',
          status_code: statusCode,
          error,
          duration_ms: Math.max(0, finished - started),
        });
        if (error === null) {
          await finishAttempt(db, row.id, {
            status: 'delivered',
            attempts,
            next_attempt_at: finished,
            locked_until: 0,
            delivered_at: finished,
          });
          sent += 1;
        } else {
          const giveUp = finished - row.created_at >= GIVE_UP_AFTER_MS;
          await finishAttempt(db, row.id, {
            status: giveUp ? 'failed' : 'queued',
            attempts,
            next_attempt_at: finished + retryDelay(attempts),
            locked_until: 0,
            delivered_at: null,
          });
        }
      }
      return sent;
    },
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
