import { randomBytes } from 'node:crypto';
import type { TicketNotification } from '@palisade/protocol';
import { signatureHeader } from '@palisade/protocol/webhook-signature';
import type { Database } from '../db/schema.js';
import { badRequest, notFound } from '../errors.js';
import { type GuardedClient, OutboundError } from '../outbound/guarded-client.js';
import { type Mailer, MailerError } from '../outbound/mailer.js';
import { findRuleWording, recordChannelResult } from '../repositories/alerts.repository.js';
import {
  accountsWithWebhook,
  claimNotification,
  type DeliveryCandidate,
  deleteWebhook,
  deliveryCandidates,
  type EndpointKey,
  findWebhook,
  finishAttempt,
  finishTestDelivery,
  insertAttempt,
  insertNotification,
  insertNotifications,
  insertTestDelivery,
  listAttempts,
  parkQueue,
  postponeQueue,
  reconcileParked,
  recordEndpointResult,
  reviveQueue,
  upsertWebhook,
} from '../repositories/notifications.repository.js';
import type { SecretBox } from '../secrets.js';
import type { PageRequest } from '../validation.js';
import { alertMail, serverLink } from './alert-mail.js';

export type { TicketNotification };

/** An alert's notification (docs/alerts.md, "Payloads"): the signed webhook gets it as it is. */
export interface AlertNotification {
  kind: 'alert.fired' | 'alert.repeat' | 'alert.resolved' | 'alert.test';
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
}

/** Where one delivery goes: the account's signed webhook, or an alert channel with its opened target. */
type Endpoint =
  | { kind: 'webhook'; url: string; secret: string }
  | { kind: 'slack' | 'discord'; url: string }
  | { kind: 'email'; to: string };

/** The body each kind of endpoint expects: Slack `{text}`, Discord `{content}`, the signed webhook the notification itself. */
export function channelBody(kind: 'slack' | 'discord', payload: string): string {
  const n = JSON.parse(payload) as { title?: string; body?: string };
  const text = [n.title, n.body].filter(Boolean).join('\n');
  return JSON.stringify(kind === 'slack' ? { text } : { content: text.slice(0, 2000) });
}

/** Retries: 10 s, doubling, at most an hour apart; given up 26 hours after the notification was queued. */
export const FIRST_RETRY_MS = 10_000;
export const MAX_RETRY_MS = 3600_000;
export const GIVE_UP_AFTER_MS = 26 * 3600_000;
const CLAIM_MS = 60_000;
const DELIVERY_TIMEOUT_MS = 10_000;
/**
 * Concurrency (docs/decisions.md, "Notification delivery"): at most 2 deliveries in flight per
 * endpoint (across processes, by the claim), at most 32 started and unanswered for under 1 s, and
 * at most 256 in flight overall per process. An endpoint that accepts and never answers holds its
 * 2 slots until the timeout, but after 1 s no longer holds back the others' starts. Slots are
 * shared by account first (docs/alerts.md, "Delivery"): with n accounts having something due or in
 * flight, one account holds at most 1/(n+1) of each bound (at least one start and one endpoint's
 * slots), so there is always room for an account that has nothing in flight yet.
 */
export const PER_ENDPOINT = 2;
export const MAX_STARTING = 32;
export const MAX_IN_FLIGHT = 256;
/** One account's share of a bound when `accounts` accounts are busy: room is kept for one more. */
export function accountShare(bound: number, accounts: number, least: number): number {
  return Math.max(least, Math.floor(bound / (accounts + 1)));
}
const SLOW_AFTER_MS = 1000;

export function retryDelay(attempts: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
}

export function createNotificationsService(deps: {
  db: Database;
  clock: () => number;
  outbound: GuardedClient;
  secrets: SecretBox;
  mailer: Mailer;
  /** `PALISADE_PUBLIC_URL`: links in alerts point there; null: no links. */
  publicUrl?: string | null;
}) {
  const { db, clock, outbound, secrets, mailer } = deps;
  const publicUrl = deps.publicUrl ?? null;
  /** This process's deliveries in flight, by notification id. */
  const inFlight = new Map<number, { endpoint: EndpointKey; url: string; startedAt: number; done: Promise<boolean> }>();
  const endpointKey = (e: EndpointKey) => `${e.accountId}:${e.channelId}`;
  let pumping: Promise<number> | null = null;
  let pumpAgain = false;
  let closing = false;

  /** What any failure to connect or to get an answer reads as (refused, timed out, not found alike). */
  const UNREACHABLE = 'could not reach the endpoint: no connection or no answer';

  /** Sends one notification to one endpoint; answers the HTTP status (if any) and the error (null: delivered). */
  async function send(
    endpoint: Endpoint,
    n: { id: number; kind: string; payload: string },
  ): Promise<{ statusCode: number | null; error: string | null }> {
    if (endpoint.kind === 'email') {
      const parsed = JSON.parse(n.payload) as AlertNotification;
      let message: { subject: string; text: string; html?: string } = {
        subject: parsed.title ?? n.kind,
        text: parsed.body ?? '',
      };
      if (n.kind.startsWith('alert.')) {
        const rule = typeof parsed.rule_id === 'number' ? await findRuleWording(db, parsed.rule_id) : null;
        message = alertMail(parsed, rule, publicUrl);
      }
      try {
        await mailer.send({ to: endpoint.to, ...message });
        return { statusCode: null, error: null };
      } catch (err) {
        if (!(err instanceof MailerError)) throw err;
        return { statusCode: null, error: err.message };
      }
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Palisade-Notifications/1',
    };
    let body = n.payload;
    if (endpoint.kind === 'webhook') {
      headers['x-palisade-delivery'] = String(n.id);
      headers['x-palisade-event'] = n.kind;
      headers['x-palisade-signature'] = signatureHeader(endpoint.secret, n.payload, Math.floor(clock() / 1000));
    } else {
      body = channelBody(endpoint.kind, n.payload);
    }
    try {
      const res = await outbound.request({
        method: 'POST',
        url: endpoint.url,
        body,
        timeoutMs: DELIVERY_TIMEOUT_MS,
        maxBytes: 64 * 1024,
        headers,
      });
      const error = res.status < 200 || res.status > 299 ? `the endpoint answered HTTP ${res.status}` : null;
      return { statusCode: res.status, error };
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      // A refused connection, a timeout, a name not found and a broken TLS handshake read the same:
      // the wording must not tell a closed port from a silent one (a port-state oracle through the
      // console; docs/security.md, "Accounts and alert channels"). The console's own target policy
      // and an over-long answer are said as they are.
      const error =
        err.kind === 'refused' || err.kind === 'too_large'
          ? `could not reach the endpoint: ${err.message}`
          : UNREACHABLE;
      return { statusCode: null, error };
    }
  }

  function endpointOf(row: DeliveryCandidate): Endpoint {
    if (row.channel_id === 0) return { kind: 'webhook', url: row.url, secret: secrets.open(row.secret_enc!) };
    const target = secrets.open(row.target_enc!);
    return row.channel_kind === 'email'
      ? { kind: 'email', to: target }
      : { kind: row.channel_kind as 'slack' | 'discord', url: target };
  }

  /**
   * One attempt: the send, then its bookkeeping (the log line, the endpoint's record, the row's next
   * state, the endpoint's queue postponed) in one transaction (docs/alerts.md, "Delivery"), so a
   * crash leaves either all of it or none of it (the claim then runs out and the row is sent again).
   * The row's state is written only while `lease` (the claim's locked_until) is still this
   * process's: a claim that ran out and was taken by another console is that console's to finish.
   */
  async function deliver(row: DeliveryCandidate, lease: number): Promise<boolean> {
    const attempts = row.attempts + 1;
    const started = clock();
    const { statusCode, error } = await send(endpointOf(row), row);
    const finished = clock();
    const endpoint = { accountId: row.account_id, channelId: row.channel_id };
    const giveUp = finished - row.created_at >= GIVE_UP_AFTER_MS;
    const retryAt = finished + retryDelay(attempts);
    await db.transaction().execute(async (trx) => {
      await insertAttempt(trx, {
        notification_id: row.id,
        account_id: row.account_id,
        at: finished,
        url: row.url,
        status_code: statusCode,
        error,
        duration_ms: Math.max(0, finished - started),
      });
      if (row.channel_id === 0) await recordEndpointResult(trx, row.account_id, row.url, finished, error === null);
      else await recordChannelResult(trx, row.channel_id, finished, error);
      if (error === null) {
        await finishAttempt(trx, row.id, lease, {
          status: 'delivered',
          attempts,
          next_attempt_at: finished,
          locked_until: 0,
          delivered_at: finished,
        });
        return;
      }
      // A webhook removed meanwhile parks the row rather than queueing it for an endpoint that is gone.
      const hook = row.channel_id === 0 ? await findWebhook(trx, row.account_id) : null;
      const held = await finishAttempt(trx, row.id, lease, {
        status: giveUp ? 'failed' : row.channel_id !== 0 || hook ? 'queued' : 'parked',
        attempts,
        next_attempt_at: retryAt,
        locked_until: 0,
        delivered_at: null,
      });
      if (held && (row.channel_id !== 0 || hook?.url === row.url))
        await postponeQueue(trx, endpoint, finished, retryAt);
    });
    return error === null;
  }

  /**
   * Starts as many due deliveries as the bounds allow, fairly; answers their outcomes (true:
   * delivered). `afterEach` runs when one ends (the worker starts the next there).
   */
  async function startDeliveries(
    budget: number,
    onError: (err: unknown) => void,
    afterEach: (() => void) | null,
  ): Promise<Promise<boolean>[]> {
    const now = clock();
    const perEndpoint = new Map<string, { endpoint: EndpointKey; n: number }>();
    const perUrl = new Map<string, number>();
    const perAccount = new Map<number, { inFlight: number; starting: number }>();
    let starting = 0;
    for (const d of inFlight.values()) {
      const key = endpointKey(d.endpoint);
      perEndpoint.set(key, { endpoint: d.endpoint, n: (perEndpoint.get(key)?.n ?? 0) + 1 });
      perUrl.set(d.url, (perUrl.get(d.url) ?? 0) + 1);
      const account = perAccount.get(d.endpoint.accountId) ?? { inFlight: 0, starting: 0 };
      account.inFlight += 1;
      if (now - d.startedAt < SLOW_AFTER_MS) {
        starting += 1;
        account.starting += 1;
      }
      perAccount.set(d.endpoint.accountId, account);
    }
    let free = Math.min(budget, MAX_STARTING - starting, MAX_IN_FLIGHT - inFlight.size);
    if (free <= 0) return [];
    // Accounts already at the share they would have with one more account busy are left out of the
    // pick-up: what they hold is theirs, the rest is kept for the others.
    const busyShare = (accounts: number) => ({
      inFlight: accountShare(MAX_IN_FLIGHT, accounts, PER_ENDPOINT),
      starting: accountShare(MAX_STARTING, accounts, 1),
    });
    const before = busyShare(perAccount.size);
    const skipAccounts = [...perAccount]
      .filter(([, a]) => a.inFlight >= before.inFlight || a.starting >= before.starting)
      .map(([id]) => id);
    const skipEndpoints = [...perEndpoint.values()].filter((e) => e.n >= PER_ENDPOINT).map((e) => e.endpoint);
    const candidates = await deliveryCandidates(db, {
      now,
      perEndpoint: PER_ENDPOINT,
      limit: free * 2,
      skipEndpoints,
      skipAccounts,
    });
    const share = busyShare(new Set([...perAccount.keys(), ...candidates.map((c) => c.account_id)]).size);
    const started: Promise<boolean>[] = [];
    for (const row of candidates) {
      if (free <= 0) break;
      const account = perAccount.get(row.account_id) ?? { inFlight: 0, starting: 0 };
      if (account.inFlight >= share.inFlight || account.starting >= share.starting) continue;
      // A webhook URL is bounded across accounts that share it; an alert channel by itself (many
      // accounts' Slack channels share one host, and must not share 2 slots).
      const target = row.channel_id === 0 ? row.url : `channel:${row.channel_id}`;
      if ((perUrl.get(target) ?? 0) >= PER_ENDPOINT) continue;
      const claimed = await claimNotification(db, {
        id: row.id,
        accountId: row.account_id,
        channelId: row.channel_id,
        now,
        until: now + CLAIM_MS,
        perEndpoint: PER_ENDPOINT,
      });
      if (!claimed) continue;
      perUrl.set(target, (perUrl.get(target) ?? 0) + 1);
      account.inFlight += 1;
      account.starting += 1;
      perAccount.set(row.account_id, account);
      free -= 1;
      const done = deliver(row, now + CLAIM_MS)
        .catch((err) => {
          onError(err);
          return false;
        })
        .finally(() => {
          inFlight.delete(row.id);
          afterEach?.();
        });
      const endpoint = { accountId: row.account_id, channelId: row.channel_id };
      inFlight.set(row.id, { endpoint, url: target, startedAt: now, done });
      started.push(done);
    }
    return started;
  }

  /** Fills free delivery slots; overlapping calls coalesce into one more round. */
  function pump(onError: (err: unknown) => void): Promise<number> {
    if (closing) return Promise.resolve(0);
    if (pumping) {
      pumpAgain = true;
      return pumping;
    }
    const again = () => void pump(onError);
    pumping = (async () => {
      let total = 0;
      do {
        pumpAgain = false;
        total += (await startDeliveries(Number.POSITIVE_INFINITY, onError, again)).length;
      } while (pumpAgain);
      return total;
    })()
      .catch((err) => {
        onError(err);
        return 0;
      })
      .finally(() => {
        pumping = null;
      });
    return pumping;
  }

  return {
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

    /**
     * The one mail an e-mail channel gets before its recipient confirms it: a fixed subject and text
     * with the link, nothing an account wrote (docs/alerts.md, "E-mail channels"). Answers the error, or null.
     */
    async sendConfirmation(to: string, link: string): Promise<string | null> {
      try {
        await mailer.send({
          to,
          subject: 'Confirm alert e-mails from Palisade',
          text: [
            'An account on a Palisade console asked to send its alert e-mails to this address.',
            '',
            'To accept them, open this link and press "Confirm":',
            link,
            '',
            'If you did not expect this, ignore this e-mail: nothing more is sent to this address unless the link is opened.',
          ].join('\n'),
        });
        return null;
      } catch (err) {
        if (!(err instanceof MailerError)) throw err;
        return err.message;
      }
    },

    /**
     * "Send a test": one delivery to the channel now, outside the outbox, its outcome answered and
     * kept on the channel (a failing channel is marked on the settings page).
     */
    async sendTest(
      accountId: number,
      channel: {
        id: number;
        kind: 'webhook' | 'slack' | 'discord' | 'email';
        target_enc: string | null;
        target_hint: string;
      },
      notification: AlertNotification,
    ) {
      let endpoint: Endpoint;
      if (channel.kind === 'webhook') {
        const hook = await findWebhook(db, accountId);
        if (!hook) throw badRequest('channel: the account has no webhook; set one under Settings → Notifications');
        endpoint = { kind: 'webhook', url: hook.url, secret: secrets.open(hook.secret_enc) };
      } else {
        const target = secrets.open(channel.target_enc!);
        endpoint = channel.kind === 'email' ? { kind: 'email', to: target } : { kind: channel.kind, url: target };
      }
      const started = clock();
      const payload = JSON.stringify({ ...notification, link: serverLink(publicUrl, notification.server_id) });
      // Kept in the outbox and its log as done, so the test shows in the alert history; written
      // first, so the test carries its own delivery id like every other delivery.
      const id = await insertTestDelivery(db, {
        account_id: accountId,
        channel_id: channel.kind === 'webhook' ? 0 : channel.id,
        kind: notification.kind,
        payload,
        status: 'failed',
        attempts: 1,
        next_attempt_at: started,
        locked_until: 0,
        created_at: started,
        delivered_at: null,
      });
      const result = await send(endpoint, { id, kind: notification.kind, payload });
      const finished = clock();
      await recordChannelResult(db, channel.id, finished, result.error);
      await finishTestDelivery(
        db,
        id,
        {
          status: result.error === null ? 'delivered' : 'failed',
          next_attempt_at: finished,
          delivered_at: result.error === null ? finished : null,
        },
        {
          account_id: accountId,
          at: finished,
          url: endpoint.kind === 'webhook' ? endpoint.url : channel.target_hint,
          status_code: result.statusCode,
          error: result.error,
          duration_ms: Math.max(0, finished - started),
        },
      );
      return {
        delivered: result.error === null,
        status_code: result.statusCode,
        error: result.error,
        duration_ms: Math.max(0, finished - started),
      };
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

    /**
     * Starts due deliveries in the background up to the bounds (the worker calls it every second;
     * each finished delivery calls it again). Claims are conditional updates, so two console
     * processes never send the same notification at once.
     */
    pump,

    /** One full round, for tests and the admin CLI: starts what is due (at most `limit`) and waits for those deliveries. */
    async runOnce(limit = 20): Promise<number> {
      const errors: unknown[] = [];
      let started = 0;
      let sent = 0;
      while (started < limit) {
        const batch = await startDeliveries(limit - started, (err) => errors.push(err), null);
        if (batch.length === 0) break;
        started += batch.length;
        sent += (await Promise.all(batch)).filter(Boolean).length;
      }
      if (errors.length > 0) throw errors[0];
      return sent;
    },

    /** Stops starting deliveries and waits for this process's in flight (at shutdown, before the database closes). */
    async settle() {
      closing = true;
      await pumping;
      await Promise.all([...inFlight.values()].map((d) => d.done));
    },

    /** Hourly: parked rows older than 26 hours fail; races between queueing and (un)setting a webhook are repaired. */
    async reconcile() {
      const now = clock();
      return reconcileParked(db, now, now - GIVE_UP_AFTER_MS);
    },
  };
}

export type NotificationsService = ReturnType<typeof createNotificationsService>;
