import { z } from 'zod';
import { agentMetricsSchema } from './agent-api.js';
import {
  alertChannelSchema,
  alertHistoryEntrySchema,
  alertMuteSchema,
  alertRuleSchema,
  channelTestResultSchema,
} from './alerts.js';
import { auditPageSchema } from './audit.js';
import { benchmarkReport } from './benchmark.js';
import { createdEnrolmentTokenSchema, enrolmentTokenSchema } from './enrolment.js';
import { ERROR_CODES } from './envelope.js';
import { fleetAddressSchema, fleetEntrySchema, fleetPolicySchema } from './fleet.js';
import { SERVER_STATES } from './server-state.js';
import { serverTagSchema } from './server-tags.js';
import {
  accountSchema,
  benchmarkRunSchema,
  scoreComponentsSchema,
  serverDetailSchema,
  serverSummarySchema,
} from './v1.js';

/**
 * What the console's dashboard routes answer (session cookie, some also SVC1-signed): the `data` of
 * each `{data}` envelope, exactly as the console sends it (docs/api.md, section 7). The web takes
 * its types from here; the console's tests hold every answer to the OpenAPI document built from
 * these schemas (packages/protocol/src/openapi.ts). Objects are closed: a field the console adds
 * must be added here first.
 */
const id = z.number().int().positive();
const epochMs = z.number().int();
const count = z.number().int().nonnegative();

/** What an account may be granted beside its own data (docs/fleet.md, "Proxies"). */
export const PERMISSIONS = ['control.read', 'control.edit'] as const;
export const permissionSchema = z.enum(PERMISSIONS);
export type Permission = z.infer<typeof permissionSchema>;

/** The signed-in account, with the permissions its control calls are checked against. */
export const meSchema = accountSchema.extend({
  role: z.enum(['user', 'admin']),
  permissions: z.array(permissionSchema),
  created_at: epochMs,
});
export type Me = z.infer<typeof meSchema>;

// ---- servers ----

const scoreValue = z.number().int().min(0).max(1000);

/**
 * A server's state as the dashboard shows it, decided by one function on the console (docs/fleet.md,
 * "Server states"); v1 `online` is true exactly when the state is not offline.
 */
const serverStateFields = {
  state: z.enum(SERVER_STATES),
  /** Why the server is in that state, in words, counted from `as_of`. */
  state_reason: z.string(),
  /** An offline server's score as it was at its last check-in (shown greyed, "last known"); null otherwise. */
  last_known_score: z.object({ score: scoreValue, at: epochMs }).nullable(),
  /** Active attacks in the latest check-in of a server that is not offline; null when unknown. */
  attacks_active: count.nullable(),
  /** The console's clock when it answered: every "… ago" in this answer is counted from it. */
  as_of: epochMs,
};

/** A server in the dashboard's fleet list: the v1 summary plus its state. */
export const dashboardServerSummarySchema = serverSummarySchema.extend({
  ...serverStateFields,
  /** The user's tags for the server (docs/fleet.md, "Tags"). */
  tags: z.array(serverTagSchema),
});
export type DashboardServerSummary = z.infer<typeof dashboardServerSummarySchema>;

/** How many of the account's servers are in each state; under_attack counts servers that are not offline. */
export const fleetCountsSchema = z.object({
  online: count,
  unreachable: count,
  offline: count,
  under_attack: count,
});
export type FleetCounts = z.infer<typeof fleetCountsSchema>;

/**
 * `GET /api/fleet/trends`: per server, its figures now (from its newest check-in) and its CPU over
 * the last hour in equal buckets, oldest first, null where no sample fell (docs/fleet.md, "Fleet trends").
 */
export const fleetTrendSchema = z.object({
  id,
  now: z
    .object({
      at: epochMs,
      cpu_pct: z.number().nullable(),
      mem_pct: z.number().nullable(),
      disk_pct: z.number().nullable(),
      /** Received plus sent over every interface but loopback, in bits per second (the agent counts bytes). */
      net_bits_per_s: z.number().nullable(),
    })
    .nullable(),
  cpu: z.array(z.number().nullable()),
});
export const fleetTrendsSchema = z.object({
  window_ms: z.number().int().positive(),
  bucket_ms: z.number().int().positive(),
  /** The end of the window: the last bucket ends here. */
  as_of: epochMs,
  servers: z.array(fleetTrendSchema),
});
export type FleetTrend = z.infer<typeof fleetTrendSchema>;
export type FleetTrends = z.infer<typeof fleetTrendsSchema>;

/** The v1 detail plus what only the owner's dashboard needs; never the agent key or address. */
export const dashboardServerSchema = serverDetailSchema.extend({
  ...serverStateFields,
  tags: z.array(serverTagSchema),
  product_id: id,
  agent_version: z.string().nullable(),
  /** The agent reported a version older than the console's bundled one (docs/agent.md, "Upgrades"). */
  agent_outdated: z.boolean(),
  enrolled: z.boolean(),
  /** The pinned SHA-256 of the agent's own certificate, for an https agent; null otherwise. */
  tls_fingerprint: z.string().nullable(),
  /**
   * How the console reaches the agent (docs/agent.md, "Outbound link"): `direct` to its address, or
   * `outbound` through the link the agent opened, `up` or `down` since `since`, as the console
   * process that answered sees it.
   */
  connection: z.object({
    mode: z.enum(['direct', 'outbound']),
    link: z.enum(['up', 'down']).nullable(),
    since: epochMs.nullable(),
  }),
});
export type DashboardServer = z.infer<typeof dashboardServerSchema>;

/** `POST /api/servers/test`: whether the address answers `/health` as an agent with this key. */
// The failure first: zod drops unknown keys, so a failed check must not be read as the success shape.
export const connectionCheckSchema = z.union([
  z.object({
    reachable: z.boolean(),
    status: z.number().int().nullable(),
    latency_ms: count.nullable(),
    error: z.string(),
  }),
  z.object({
    reachable: z.literal(true),
    status: z.literal(200),
    latency_ms: count,
    /** Absent when the agent's /health carried no version string. */
    agent_version: z.string().optional(),
  }),
]);
export type ConnectionCheck = z.infer<typeof connectionCheckSchema>;

/** A daemon token to hand to `palisade-agent enroll` by hand; shown once. */
export const enrollmentSchema = z.object({ console_url: z.string(), token: z.string(), command: z.string() });
export type Enrollment = z.infer<typeof enrollmentSchema>;

export const scoreSectionSchema = z.object({
  score: scoreValue,
  components: scoreComponentsSchema,
  notes: z.array(z.string()),
  weights: scoreComponentsSchema,
  state: z.enum(SERVER_STATES),
  last_known_score: serverStateFields.last_known_score,
  as_of: epochMs,
});
export type ScoreSection = z.infer<typeof scoreSectionSchema>;

export const factsSectionSchema = z.object({
  hostname: z.string().nullable(),
  public_ip: z.string().nullable(),
  agent_version: z.string().nullable(),
  facts: z.record(z.string(), z.unknown()),
});
export type FactsSection = z.infer<typeof factsSectionSchema>;

export const HISTORY_RANGE_NAMES = ['1h', '24h', '7d', '30d'] as const;
export const historyRangeSchema = z.enum(HISTORY_RANGE_NAMES);
export type HistoryRange = z.infer<typeof historyRangeSchema>;

/** One bucket of the history: the mean of the samples in it. */
export const historySampleSchema = z.object({
  ts: epochMs,
  cpu_pct: z.number(),
  mem_used_mb: z.number(),
  mem_total_mb: z.number(),
  disk_used_pct: z.number(),
  load1: z.number(),
  rx_bps: z.number(),
  tx_bps: z.number(),
});
export type HistorySample = z.infer<typeof historySampleSchema>;

export const historySectionSchema = z.object({
  range: historyRangeSchema,
  from: epochMs,
  to: epochMs,
  bucket_ms: z.number().int().positive(),
  samples: z.array(historySampleSchema),
});
export type HistorySection = z.infer<typeof historySectionSchema>;

export const verificationCheckSchema = z.object({ name: z.string(), ok: z.boolean(), detail: z.string() });
export type VerificationCheck = z.infer<typeof verificationCheckSchema>;

/** The dashboard's view of a benchmark run: the v1 run in any status, with its log and checks; never the run token. */
export const benchmarkRunViewSchema = benchmarkRunSchema.extend({
  status: z.enum(['pending', 'running', 'done', 'failed']),
  checks: z.array(verificationCheckSchema),
  hardware: z.record(z.string(), z.unknown()),
  /** The raw figures the scores came from (docs/benchmarks.md); null before the run is done, and for runs stored before they were kept. */
  measurements: benchmarkReport.shape.measurements.nullable(),
  /** Why a section was not measured, by section. */
  skipped: z.record(z.string(), z.string()),
  log: z.string(),
  error: z.string().nullable(),
  created_at: epochMs,
  started_at: epochMs.nullable(),
  finished_at: epochMs.nullable(),
});
export type BenchmarkRunView = z.infer<typeof benchmarkRunViewSchema>;

export const benchmarksSectionSchema = z.object({ runs: z.array(benchmarkRunViewSchema) });

/** `section?name=attacks`: the agent's attack list (docs/protection.md) when it answered one, else why not. */
export const attacksSectionSchema = z.union([
  z.object({ available: z.literal(false), error: z.string() }),
  z.object({ available: z.literal(true) }).catchall(z.unknown()),
]);
export type AttacksSection = z.infer<typeof attacksSectionSchema>;

export const SECTION_NAMES = ['overview', 'score', 'history', 'benchmarks', 'attacks', 'facts'] as const;
export type SectionName = (typeof SECTION_NAMES)[number];

/** `GET /api/servers/:id/section?name=…`: one schema per name. */
export const sectionSchemas = {
  overview: dashboardServerSchema,
  score: scoreSectionSchema,
  history: historySectionSchema,
  benchmarks: benchmarksSectionSchema,
  attacks: attacksSectionSchema,
  facts: factsSectionSchema,
} as const satisfies Record<SectionName, z.ZodType>;

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

/** `author_role` says who wrote it: the account's user, or support (an admin). */
export const ticketMessageSchema = z.object({
  id,
  author_role: z.enum(['user', 'admin']),
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

// ---- the envelopes ----

const data = <T extends z.ZodType>(schema: T) => z.object({ data: schema });
const flag = <K extends string>(key: K) => data(z.object({ [key]: z.literal(true) } as Record<K, z.ZodLiteral<true>>));

/** Every failure of a dashboard route: the sentence, its code, and for a refused SVC1 signature why. */
export const errorEnvelopeSchema = z.object({
  error: z.string(),
  code: z.enum(ERROR_CODES),
  reason: z.enum(['missing', 'bad_version', 'stale', 'future', 'bad_signature', 'replay']).optional(),
});

/**
 * The success bodies of the dashboard routes, by name; `dashboardRoutes` (dashboard-routes.ts) says which
 * route answers which. OpenAPI and the web's types both come from these.
 */
export const dashboardResponses = {
  account: data(z.object({ account: meSchema })),
  /** `POST /api/auth/login`: signed in, or the password was right and the code is asked for next. */
  login: data(z.union([z.object({ account: meSchema }), twoFactorChallengeSchema])),
  passwordChanged: data(z.object({ changed: z.literal(true), sessions_ended: count })),
  sessions: data(z.object({ sessions: z.array(accountSessionSchema) })),
  sessionsEnded: data(z.object({ sessions_ended: count })),
  twoFactor: data(twoFactorStatusSchema),
  twoFactorSetup: data(twoFactorSetupSchema),
  twoFactorEnabled: data(z.object({ enabled: z.literal(true), recovery_codes: z.array(z.string()) })),
  accountDeleted: flag('account_deleted'),
  session: data(z.object({ account: meSchema.nullable() })),
  loggedOut: flag('logged_out'),
  me: data(meSchema),
  webhook: data(webhookSettingsSchema),
  webhookSet: data(webhookSetSchema),
  deleted: flag('deleted'),
  revoked: flag('revoked'),
  securityEvents: data(z.object({ events: z.array(securityEventSchema), ...pageFields })),
  tokens: data(z.object({ tokens: z.array(accessTokenSchema) })),
  tokenCreated: data(createdAccessTokenSchema),
  enrolmentTokens: data(z.object({ tokens: z.array(enrolmentTokenSchema) })),
  alertRules: data(z.object({ rules: z.array(alertRuleSchema) })),
  alertRule: data(z.object({ rule: alertRuleSchema })),
  alertChannels: data(z.object({ channels: z.array(alertChannelSchema) })),
  alertChannel: data(z.object({ channel: alertChannelSchema })),
  alertChannelTest: data(channelTestResultSchema),
  alertHistory: data(z.object({ history: z.array(alertHistoryEntrySchema) })),
  alertMutes: data(z.object({ mutes: z.array(alertMuteSchema) })),
  alertMute: data(alertMuteSchema),
  enrolmentTokenCreated: data(createdEnrolmentTokenSchema),
  keys: data(z.object({ keys: z.array(signingKeySchema) })),
  keyCreated: data(createdSigningKeySchema),
  catalog: data(z.object({ items: z.array(catalogItemSchema) })),
  products: data(z.object({ products: z.array(productSchema) })),
  product: data(z.object({ product: productSchema })),
  billing: data(billingSummarySchema),
  servers: data(z.object({ servers: z.array(dashboardServerSummarySchema), counts: fleetCountsSchema })),
  fleetTrends: data(fleetTrendsSchema),
  auditPage: data(auditPageSchema),
  fleetPolicies: data(z.object({ policies: z.array(fleetPolicySchema) })),
  fleetPolicy: data(z.object({ policy: fleetPolicySchema })),
  fleetEntries: data(z.object({ entries: z.array(fleetEntrySchema) })),
  fleetEntry: data(z.object({ entry: fleetEntrySchema })),
  fleetAddress: data(fleetAddressSchema),
  fleetLifted: data(z.object({ lifted: z.number().int().nonnegative() })),
  server: data(z.object({ server: dashboardServerSchema })),
  connection: data(connectionCheckSchema),
  enrollment: data(enrollmentSchema),
  section: data(
    z.union([
      sectionSchemas.overview,
      sectionSchemas.score,
      sectionSchemas.history,
      sectionSchemas.benchmarks,
      sectionSchemas.attacks,
      sectionSchemas.facts,
    ]),
  ),
  /** The agent's `/metrics` snapshot, passed through the metrics proxy as it came: no envelope. */
  metrics: agentMetricsSchema,
  runs: data(z.object({ runs: z.array(benchmarkRunViewSchema) })),
  run: data(z.object({ run: benchmarkRunViewSchema })),
  tickets: data(z.object({ tickets: z.array(listedTicketSchema), ...pageFields })),
  ticket: data(z.object({ ticket: ticketWithMessagesSchema })),
  error: errorEnvelopeSchema,
};
export type DashboardResponseName = keyof typeof dashboardResponses;

/** The `data` of a dashboard answer, by its name in `dashboardResponses`: what the web's fetchers resolve to. */
export type DashboardData<N extends DashboardResponseName> =
  z.infer<(typeof dashboardResponses)[N]> extends { data: infer D } ? D : never;

/** `GET /api/servers/:id/section?name=N` answers this `data`. */
export type DashboardSection<N extends SectionName> = z.infer<(typeof sectionSchemas)[N]>;
