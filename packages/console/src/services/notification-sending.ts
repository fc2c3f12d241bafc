import { signatureHeader } from '@palisade/protocol/webhook-signature';
import type { Database } from '../db/schema.js';
import { badRequest } from '../errors.js';
import { type GuardedClient, OutboundError } from '../outbound/guarded-client.js';
import { type Mailer, MailerError } from '../outbound/mailer.js';
import { findRuleWording, recordChannelResult } from '../repositories/alerts.repository.js';
import {
  type DeliveryCandidate,
  findWebhook,
  finishTestDelivery,
  insertTestDelivery,
} from '../repositories/notifications.repository.js';
import type { SecretBox } from '../secrets.js';
import { alertMail, serverLink } from './alert-mail.js';
import type { AlertNotification } from './notifications.service.js';

/** Where one delivery goes: the account's signed webhook, or an alert channel with its opened target. */
export type Endpoint =
  | { kind: 'webhook'; url: string; secret: string }
  | { kind: 'slack' | 'discord'; url: string }
  | { kind: 'email'; to: string };

/** What one send came to: the HTTP status (if any) and the error (null: delivered). */
export interface SendResult {
  statusCode: number | null;
  error: string | null;
}

const DELIVERY_TIMEOUT_MS = 10_000;
/** What any failure to connect or to get an answer reads as (refused, timed out, not found alike). */
const UNREACHABLE = 'could not reach the endpoint: no connection or no answer';

/** The body each kind of endpoint expects: Slack `{text}`, Discord `{content}`, the signed webhook the notification itself. */
export function channelBody(kind: 'slack' | 'discord', payload: string): string {
  const n = JSON.parse(payload) as { title?: string; body?: string };
  const text = [n.title, n.body].filter(Boolean).join('\n');
  return JSON.stringify(kind === 'slack' ? { text } : { content: text.slice(0, 2000) });
}

/**
 * Sending one notification to one endpoint, how each endpoint wants it (signed JSON, Slack or
 * Discord text, an e-mail worded from the rule): the outbox's deliveries (notification-delivery.ts),
 * a channel's test and an e-mail channel's confirmation all go through here.
 */
export function createSender(deps: {
  db: Database;
  clock: () => number;
  outbound: GuardedClient;
  secrets: SecretBox;
  mailer: Mailer;
  publicUrl: string | null;
}) {
  const { db, clock, outbound, secrets, mailer, publicUrl } = deps;

  async function mail(to: string, n: { kind: string; payload: string }): Promise<SendResult> {
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
      await mailer.send({ to, ...message });
      return { statusCode: null, error: null };
    } catch (err) {
      if (!(err instanceof MailerError)) throw err;
      return { statusCode: null, error: err.message };
    }
  }

  async function post(
    endpoint: Exclude<Endpoint, { kind: 'email' }>,
    n: { id: number; kind: string; payload: string },
  ): Promise<SendResult> {
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

  /** Sends one notification to one endpoint. */
  const send = (endpoint: Endpoint, n: { id: number; kind: string; payload: string }): Promise<SendResult> =>
    endpoint.kind === 'email' ? mail(endpoint.to, n) : post(endpoint, n);

  /** Where an outbox row goes, its target opened. */
  function endpointOf(row: DeliveryCandidate): Endpoint {
    if (row.channel_id === 0) return { kind: 'webhook', url: row.url, secret: secrets.open(row.secret_enc!) };
    const target = secrets.open(row.target_enc!);
    return row.channel_kind === 'email'
      ? { kind: 'email', to: target }
      : { kind: row.channel_kind as 'slack' | 'discord', url: target };
  }

  /** A channel's endpoint for a test: its own target, or the account's webhook for a `webhook` channel. */
  async function testEndpoint(
    accountId: number,
    channel: { kind: 'webhook' | 'slack' | 'discord' | 'email'; target_enc: string | null },
  ): Promise<Endpoint> {
    if (channel.kind === 'webhook') {
      const hook = await findWebhook(db, accountId);
      if (!hook) throw badRequest('channel: the account has no webhook; set one under Settings → Notifications');
      return { kind: 'webhook', url: hook.url, secret: secrets.open(hook.secret_enc) };
    }
    const target = secrets.open(channel.target_enc!);
    return channel.kind === 'email' ? { kind: 'email', to: target } : { kind: channel.kind, url: target };
  }

  return {
    send,
    endpointOf,

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
      const endpoint = await testEndpoint(accountId, channel);
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
      const duration = Math.max(0, finished - started);
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
          duration_ms: duration,
        },
      );
      return {
        delivered: result.error === null,
        status_code: result.statusCode,
        error: result.error,
        duration_ms: duration,
      };
    },
  };
}

export type Sender = ReturnType<typeof createSender>;
