import { z } from 'zod';

/**
 * The dashboard's answers about the account rather than its servers: credentials, paging, catalog
 * and billing, tickets, notifications and security events, sessions and two-factor sign-in. Split
 * from dashboard.ts, which re-exports everything here and holds the envelopes of every route; the
 * same rules apply (objects are closed: a field the console adds must be added here first).
 */
const id = z.number().int().positive();
const epochMs = z.number().int();
const count = z.number().int().nonnegative();

// ---- credentials ----

/** A personal access token (`svc_…`) as listed: never the token itself. */
export const accessTokenSchema = z.object({
  id,
  name: z.string(),
  last4: z.string(),
  created_at: epochMs,
  last_used_at: epochMs.nullable(),
});
export type AccessToken = z.infer<typeof accessTokenSchema>;
/** The creation answer: the only time the raw token is sent. */
export const createdAccessTokenSchema = accessTokenSchema.extend({ token: z.string() });
export type CreatedAccessToken = z.infer<typeof createdAccessTokenSchema>;

/** An SVC1 signing key (`svck_…`) as listed: never the key itself. */
export const signingKeySchema = accessTokenSchema;
export type SigningKey = z.infer<typeof signingKeySchema>;
export const createdSigningKeySchema = signingKeySchema.extend({ key: z.string() });
export type CreatedSigningKey = z.infer<typeof createdSigningKeySchema>;

// ---- paging ----

/**
 * What a list that pages adds to its answer (docs/api.md, "Lists that page"): the cursor of the next
 * page (null on the last one) and how many items the list holds in all.
 */
export const pageFields = { next_cursor: z.string().nullable(), total: count };
export const PAGE_LIMIT_DEFAULT = 50;
export const PAGE_LIMIT_MAX = 200;

// ---- catalog and billing ----

const interval = z.enum(['month', 'year']);
/** What a plan includes that the console enforces (docs/decisions.md, "Plans that tell the truth"). */
export const planCapabilitySchema = z.enum(['benchmarks']);
export type PlanCapability = z.infer<typeof planCapabilitySchema>;

export const catalogItemSchema = z.object({
  id,
  sku: z.string(),
  name: z.string(),
  description: z.string(),
  price_cents: count,
  currency: z.string(),
  interval,
  server_limit: count,
  features: z.array(z.string()),
  includes: z.array(planCapabilitySchema),
});
export type CatalogItem = z.infer<typeof catalogItemSchema>;

export const productSchema = z.object({
  id,
  catalog_id: id,
  sku: z.string(),
  name: z.string(),
  price_cents: count,
  currency: z.string(),
  interval,
  server_limit: count,
  servers_used: count,
  includes: z.array(planCapabilitySchema),
  created_at: epochMs,
});
export type Product = z.infer<typeof productSchema>;

export const billingSummarySchema = z.object({
  items: z.array(
    z.object({
      product_id: id,
      sku: z.string(),
      name: z.string(),
      price_cents: count,
      currency: z.string(),
      interval,
      servers_used: count,
      server_limit: count,
    }),
  ),
  totals: z.array(z.object({ currency: z.string(), interval, amount_cents: count })),
});
export type BillingSummary = z.infer<typeof billingSummarySchema>;

// ---- tickets ----

export const ticketSchema = z.object({
  id,
  ref: z.string(),
  product_id: id,
  subject: z.string(),
  status: z.enum(['open', 'closed']),
  created_at: epochMs,
  updated_at: epochMs,
});
export type Ticket = z.infer<typeof ticketSchema>;

/** A ticket in a list: with the email of the account that opened it. */
export const listedTicketSchema = ticketSchema.extend({ account_email: z.string() });
export type ListedTicket = z.infer<typeof listedTicketSchema>;

/**
 * `author_role` says who wrote it: a member of the team, or support (an admin); `author_name` the
 * person's name, or the name of the team it was written in while `author_person_id` is null (a
 * message from before authors were kept, or of a closed account: docs/tickets.md).
 */
export const ticketMessageSchema = z.object({
  id,
  author_role: z.enum(['user', 'admin']),
  author_person_id: id.nullable(),
  author_name: z.string(),
  body: z.string(),
  created_at: epochMs,
});
export type TicketMessage = z.infer<typeof ticketMessageSchema>;

export const ticketWithMessagesSchema = ticketSchema.extend({ messages: z.array(ticketMessageSchema) });
export type TicketWithMessages = z.infer<typeof ticketWithMessagesSchema>;

// ---- notifications and security events ----

/** One attempt to deliver a ticket notification to the account's webhook. */
export const webhookDeliverySchema = z.object({
  id,
  notification_id: id,
  kind: z.string(),
  /** The notification's state now: queued (will be tried again), delivered, or failed (given up). */
  status: z.enum(['queued', 'delivered', 'failed']),
  created_at: epochMs,
  url: z.string(),
  response_status: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: count,
});
export type WebhookDelivery = z.infer<typeof webhookDeliverySchema>;

export const webhookSettingsSchema = z.object({
  url: z.string().nullable(),
  deliveries: z.array(webhookDeliverySchema),
  ...pageFields,
});
export type WebhookSettings = z.infer<typeof webhookSettingsSchema>;

/** `PUT /api/account/webhook`: the URL and the signing secret deliveries are signed with. */
export const webhookSetSchema = z.object({ url: z.string(), secret: z.string() });
export type WebhookSet = z.infer<typeof webhookSetSchema>;

/** Every kind of security event, in the words the dashboard shows (docs/security.md, "Security events"). */
export const SECURITY_EVENT_LABELS = {
  login_failed: 'Failed sign-in',
  signed_request_failed: 'Refused signed request',
  two_factor_failed: 'Wrong two-factor code',
  two_factor_locked: 'Two-factor codes locked after too many wrong ones',
  recovery_code_used: 'Recovery code used',
  password_changed: 'Password changed',
  two_factor_enabled: 'Two-factor sign-in turned on',
  two_factor_disabled: 'Two-factor sign-in turned off',
  sessions_revoked: 'Other sessions signed out',
} as const;
export type SecurityEventKind = keyof typeof SECURITY_EVENT_LABELS;
export const SECURITY_EVENT_KINDS = Object.keys(SECURITY_EVENT_LABELS) as [SecurityEventKind, ...SecurityEventKind[]];

/** The words for an event kind; a kind this build does not know is shown as it came. */
export function securityEventLabel(kind: string): string {
  return Object.hasOwn(SECURITY_EVENT_LABELS, kind) ? SECURITY_EVENT_LABELS[kind as SecurityEventKind] : kind;
}

export const securityEventSchema = z.object({
  id,
  kind: z.enum(SECURITY_EVENT_KINDS),
  reason: z.string(),
  key_last4: z.string().nullable(),
  method: z.string(),
  path: z.string(),
  ip: z.string(),
  created_at: epochMs,
});
export type SecurityEvent = z.infer<typeof securityEventSchema>;

// ---- account security: sessions, two-factor sign-in ----

/** One signed-in browser of the account. `id` is the SHA-256 of the cookie, never the cookie itself. */
export const accountSessionSchema = z.object({
  id: z.string().regex(/^[0-9a-f]{64}$/),
  /** The browser and system in words, from the User-Agent the session was made with ("Chrome on Linux"). */
  device: z.string(),
  ip: z.string().nullable(),
  created_at: epochMs,
  last_seen_at: epochMs,
  /** The session this request came with. */
  current: z.boolean(),
});
export type AccountSession = z.infer<typeof accountSessionSchema>;

export const twoFactorStatusSchema = z.object({
  enabled: z.boolean(),
  enabled_at: epochMs.nullable(),
  recovery_codes_left: count,
});
export type TwoFactorStatus = z.infer<typeof twoFactorStatusSchema>;

/** `POST /api/account/two-factor/setup`: the new secret, shown this once, and the address apps read. */
export const twoFactorSetupSchema = z.object({ secret: z.string(), uri: z.string() });
export type TwoFactorSetup = z.infer<typeof twoFactorSetupSchema>;

/** A sign-in whose password was right on an account with two-factor on: no session until the code is. */
export const twoFactorChallengeSchema = z.object({
  two_factor_required: z.literal(true),
  challenge: z.string(),
  expires_at: epochMs,
});
export type TwoFactorChallenge = z.infer<typeof twoFactorChallengeSchema>;
