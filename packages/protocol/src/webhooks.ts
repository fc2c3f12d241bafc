import * as z from 'zod/mini';
import { attackSchema } from './control-answers.js';

/**
 * The bodies Palisade POSTs to a user's endpoints, each signed with `X-Palisade-Signature`
 * (docs/signing.md): the agent's attack webhook (docs/protection.md, "Attack webhooks") and the
 * console's account notifications (docs/tickets.md, "Notifications"). Written with `zod/mini` like
 * the control schemas, so the agent can share them; the agent imports the types only.
 */

/** An attack as the webhook carries it: the same record `GET attacks` lists. */
export const attackDetailsSchema = attackSchema;
export type AttackDetails = z.infer<typeof attackDetailsSchema>;

export const ALERT_TYPES = ['attack.started', 'attack.ended', 'test'] as const;
export type AlertType = (typeof ALERT_TYPES)[number];

/** The agent's attack webhook body. */
export const alertPayloadSchema = z.object({
  /** Unique per event; a receiver that sees an id twice has the same event again (retries). */
  id: z.string(),
  type: z.enum(ALERT_TYPES),
  /** When the event was queued, epoch ms. */
  ts: z.int(),
  host: z.object({ hostname: z.string(), public_ip: z.nullable(z.string()) }),
  attack: z.nullable(attackDetailsSchema),
});
export type AlertPayload = z.infer<typeof alertPayloadSchema>;

export const TICKET_EVENTS = ['ticket.created', 'ticket.reply', 'ticket.closed', 'ticket.reopened'] as const;

/** The console's account webhook body for ticket activity (`X-Palisade-Event` carries `kind`). */
export const ticketNotificationSchema = z.object({
  kind: z.enum(TICKET_EVENTS),
  title: z.string(),
  body: z.string(),
  ticket_ref: z.string(),
});
export type TicketNotification = z.infer<typeof ticketNotificationSchema>;

export const ALERT_EVENTS = ['alert.fired', 'alert.repeat', 'alert.resolved', 'alert.test'] as const;

/**
 * The console's account webhook body for an alert (docs/alerts.md, "Payloads"; `X-Palisade-Event`
 * carries `kind`, `X-Palisade-Delivery` the delivery's own id, a test's too).
 */
export const alertNotificationSchema = z.object({
  kind: z.enum(ALERT_EVENTS),
  title: z.string(),
  body: z.string(),
  rule_id: z.nullable(z.int()),
  rule: z.nullable(z.string()),
  server_id: z.nullable(z.int()),
  server: z.nullable(z.string()),
  value: z.nullable(z.number()),
  /** When the round that sent it ran, epoch ms. */
  at: z.int(),
  /** The server's page on the dashboard (from `PALISADE_PUBLIC_URL`); null without it or without a server. */
  link: z.nullable(z.string()),
});
export type AlertNotificationPayload = z.infer<typeof alertNotificationSchema>;

/**
 * The console's account webhook body when an agent update fails (docs/fleet.md, "Agent updates";
 * `X-Palisade-Event: agent_update.failed`): the alert's fields, and the rollout, its 0-based wave
 * and why. Sent once per failed rollout to each of the account's confirmed alert channels and its webhook.
 */
export const agentUpdateFailedNotificationSchema = z.extend(alertNotificationSchema, {
  kind: z.literal('agent_update.failed'),
  rollout_id: z.int(),
  wave: z.int(),
  reason: z.string(),
});
export type AgentUpdateFailedNotification = z.infer<typeof agentUpdateFailedNotificationSchema>;
