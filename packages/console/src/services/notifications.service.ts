import { randomBytes } from 'node:crypto';
import type { TicketNotification } from '@palisade/protocol';
import type { Database } from '../db/schema.js';
import { badRequest, notFound } from '../errors.js';
import { type GuardedClient, OutboundError } from '../outbound/guarded-client.js';
import type { Mailer } from '../outbound/mailer.js';
import {
  accountsWithWebhook,
  deleteWebhook,
  findWebhook,
  insertNotification,
  insertNotifications,
  listAttempts,
  parkQueue,
  reconcileParked,
  reviveQueue,
  upsertWebhook,
} from '../repositories/notifications.repository.js';
import type { SecretBox } from '../secrets.js';
import type { PageRequest } from '../validation.js';
import { serverLink } from './alert-mail.js';
import { createDelivery, GIVE_UP_AFTER_MS } from './notification-delivery.js';
import { createSender } from './notification-sending.js';

export type { TicketNotification };

/** An alert's notification (docs/alerts.md, "Payloads"): the signed webhook gets it as it is. */
export interface AlertNotification {
  kind: 'alert.fired' | 'alert.repeat' | 'alert.resolved' | 'alert.test' | 'agent_update.failed';
  title: string;
  body: string;
  rule_id: number | null;
  rule: string | null;
  server_id: number | null;
  server: string | null;
  value: number | null;
  at: number;
  /** The server's dashboard page (`PALISADE_PUBLIC_URL`); null without one or without a server. */
  link?: string | null;
  /** `agent_update.failed` (docs/fleet.md, "Agent updates"): the rollout, its 0-based wave and why. */
  rollout_id?: number;
  wave?: number;
  reason?: string;
}

/**
 * Notifications (docs/alerts.md, "Delivery"): this file queues them in the durable outbox with the
 * activity that caused them and keeps the account's webhook; notification-delivery.ts works the
 * outbox off, and notification-sending.ts sends each one as its endpoint wants it.
 */
export function createNotificationsService(deps: {
  db: Database;
  clock: () => number;
  outbound: GuardedClient;
  secrets: SecretBox;
  mailer: Mailer;
  /** `PALISADE_PUBLIC_URL`: links in alerts point there; null: no links. */
  publicUrl?: string | null;
}) {
  const { db, clock, outbound, secrets } = deps;
  const publicUrl = deps.publicUrl ?? null;
  const sender = createSender({ ...deps, publicUrl });
  const delivery = createDelivery({ db, clock, sender });

  return {
    ...delivery,
    sendConfirmation: sender.sendConfirmation,
    sendTest: sender.sendTest,

    /**
     * Queues a notification; call it with the transaction of the activity so both commit together.
     * Without a webhook the row is parked: not polled, queued again when a webhook is set.
     */
    async enqueue(trx: Database, accountId: number, notification: TicketNotification) {
      const now = clock();
      const hook = await findWebhook(trx, accountId);
      await insertNotification(trx, {
        account_id: accountId,
        kind: notification.kind,
        payload: JSON.stringify(notification),
        status: hook ? 'queued' : 'parked',
        attempts: 0,
        next_attempt_at: now,
        locked_until: 0,
        created_at: now,
        delivered_at: null,
      });
    },

    /**
     * Queues alerts, each for one channel (0: the account's signed webhook, parked while it has
     * none), in one statement; call it with the transaction that records the alerts' states so both
     * commit together.
     */
    async enqueueAlerts(
      trx: Database,
      alerts: { accountId: number; channelId: number; notification: AlertNotification }[],
    ) {
      const now = clock();
      const toWebhook = [...new Set(alerts.filter((a) => a.channelId === 0).map((a) => a.accountId))];
      const hooked = await accountsWithWebhook(trx, toWebhook);
      await insertNotifications(
        trx,
        alerts.map(({ accountId, channelId, notification }) => ({
          account_id: accountId,
          channel_id: channelId,
          kind: notification.kind,
          // The server's page goes with it (docs/alerts.md, "Payloads"), so a receiver can link to it.
          payload: JSON.stringify({ ...notification, link: serverLink(publicUrl, notification.server_id) }),
          status: channelId === 0 && !hooked.has(accountId) ? 'parked' : 'queued',
          attempts: 0,
          next_attempt_at: now,
          locked_until: 0,
          created_at: now,
          delivered_at: null,
        })),
      );
    },

    /** The URL and a page of its delivery attempts, newest first. */
    async webhook(accountId: number, page: PageRequest) {
      const hook = await findWebhook(db, accountId);
      return { url: hook?.url ?? null, ...(await listAttempts(db, accountId, page)) };
    },

    /**
     * Sets the URL (checked by the target policy now, and again at every delivery). The secret is
     * made once per account. Parked and waiting notifications of the last 26 hours are due at once.
     */
    async setWebhook(accountId: number, url: string) {
      try {
        await outbound.checkUrl(url);
      } catch (err) {
        if (err instanceof OutboundError) throw badRequest(`url: ${err.message}`);
        throw err;
      }
      const existing = await findWebhook(db, accountId);
      const secret = existing ? secrets.open(existing.secret_enc) : `whsec_${randomBytes(24).toString('base64url')}`;
      const now = clock();
      await upsertWebhook(db, {
        account_id: accountId,
        url,
        secret_enc: existing?.secret_enc ?? secrets.seal(secret),
        updated_at: now,
      });
      await reviveQueue(db, accountId, now, now - GIVE_UP_AFTER_MS);
      return { url, secret };
    },

    async removeWebhook(accountId: number) {
      if (!(await deleteWebhook(db, accountId))) throw notFound('webhook');
      await parkQueue(db, accountId);
    },

    /** Hourly: parked rows older than 26 hours fail; races between queueing and (un)setting a webhook are repaired. */
    async reconcile() {
      const now = clock();
      return reconcileParked(db, now, now - GIVE_UP_AFTER_MS);
    },
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
