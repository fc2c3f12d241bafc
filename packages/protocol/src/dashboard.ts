import { z } from 'zod';
import { agentMetricsSchema } from './agent-api.js';
import { rolloutDetailSchema, rolloutListSchema, rolloutSchema } from './agent-update-schemas.js';
import {
  alertChannelSchema,
  alertEvaluationSchema,
  alertHistoryEntrySchema,
  alertMuteSchema,
  alertRuleSchema,
  channelTestResultSchema,
} from './alerts.js';
import { auditPageSchema } from './audit.js';
import { benchmarkReport } from './benchmark.js';
import {
  accessTokenSchema,
  accountSessionSchema,
  billingSummarySchema,
  catalogItemSchema,
  createdAccessTokenSchema,
  createdSigningKeySchema,
  listedTicketSchema,
  pageFields,
  productSchema,
  securityEventSchema,
  signingKeySchema,
  ticketWithMessagesSchema,
  twoFactorChallengeSchema,
  twoFactorSetupSchema,
  twoFactorStatusSchema,
  webhookSetSchema,
  webhookSettingsSchema,
} from './dashboard-account.js';
import { createdEnrolmentTokenSchema, enrolmentTokenSchema } from './enrolment.js';
import { ERROR_CODES } from './envelope.js';
import {
  fleetAddressSchema,
  fleetEntriesPageSchema,
  fleetEntrySchema,
  fleetLiftSchema,
  fleetPolicySchema,
  fleetServerBansSchema,
} from './fleet.js';
import {
  createdInvitationSchema,
  invitationPreviewSchema,
  invitationSchema,
  permissionSchema,
  teamMemberSchema,
  teamSchema,
} from './roles.js';
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
export * from './dashboard-account.js';

const id = z.number().int().positive();
const epochMs = z.number().int();
const count = z.number().int().nonnegative();

/**
 * How a person signs in: `single_sign_on` when they have no password (made by single sign-on: only
 * the console's OpenID provider signs them in), `password` otherwise, whether or not they also use
 * the provider (docs/teams.md, "Single sign-on").
 */
export const signInSchema = z.enum(['password', 'single_sign_on']);
export type SignIn = z.infer<typeof signInSchema>;

/** The signed-in account, with the permissions its control calls are checked against. */
export const meSchema = accountSchema.extend({
  role: z.enum(['user', 'admin']),
  permissions: z.array(permissionSchema),
  sign_in: signInSchema,
  created_at: epochMs,
});
export type Me = z.infer<typeof meSchema>;

// ---- servers ----

const scoreValue = z.number().int().min(0).max(1000);

/**
 * A server's state as the dashboard shows it, decided by one function on the console (docs/fleet.md,
 * "Server states"); v1 `online` is true exactly when the state is not offline (a late server is still
 * v1 `online`: the spec's two minutes).
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
  late: count,
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

export const verificationCheckSchema = z.object({
  name: z.string(),
  ok: z.boolean(),
  detail: z.string(),
  /** True when the check had nothing to look at (its section was not measured): it neither passed nor failed. */
  skipped: z.boolean().optional(),
});
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

// ---- the envelopes ----

const data = <T extends z.ZodType>(schema: T) => z.object({ data: schema });
const flag = <K extends string>(key: K) => data(z.object({ [key]: z.literal(true) } as Record<K, z.ZodLiteral<true>>));

/** Every failure of a dashboard route: the sentence, its code, and for a refused SVC1 signature why. */
export const errorEnvelopeSchema = z.object({
  error: z.string(),
  code: z.enum(ERROR_CODES),
  reason: z.enum(['missing', 'bad_version', 'stale', 'future', 'bad_signature', 'replay']).optional(),
  /** With `permission_required`: the permission the request lacked (docs/teams.md). */
  permission: z.string().optional(),
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
  /** `GET /api/auth/oidc`: whether single sign-on is set up, and the provider's name for the button. */
  singleSignOn: data(z.object({ enabled: z.boolean(), name: z.string().nullable() })),
  me: data(meSchema),
  webhook: data(webhookSettingsSchema),
  webhookSet: data(webhookSetSchema),
  deleted: flag('deleted'),
  revoked: flag('revoked'),
  securityEvents: data(z.object({ events: z.array(securityEventSchema), ...pageFields })),
  tokens: data(z.object({ tokens: z.array(accessTokenSchema) })),
  teams: data(z.object({ teams: z.array(teamSchema) })),
  team: data(z.object({ team: teamSchema })),
  members: data(z.object({ members: z.array(teamMemberSchema), ...pageFields })),
  member: data(z.object({ member: teamMemberSchema })),
  memberRemoved: flag('removed'),
  invitations: data(z.object({ invitations: z.array(invitationSchema) })),
  invitationCreated: data(createdInvitationSchema),
  invitationPreview: data(z.object({ invitation: invitationPreviewSchema })),
  invitationAccepted: data(z.object({ account: meSchema, team: teamSchema })),
  tokenCreated: data(createdAccessTokenSchema),
  enrolmentTokens: data(z.object({ tokens: z.array(enrolmentTokenSchema) })),
  alertRules: data(z.object({ rules: z.array(alertRuleSchema) })),
  alertRule: data(z.object({ rule: alertRuleSchema })),
  alertChannels: data(z.object({ channels: z.array(alertChannelSchema) })),
  alertChannel: data(z.object({ channel: alertChannelSchema })),
  alertChannelTest: data(channelTestResultSchema),
  alertHistory: data(z.object({ history: z.array(alertHistoryEntrySchema), ...pageFields })),
  alertMutes: data(z.object({ mutes: z.array(alertMuteSchema) })),
  alertMute: data(alertMuteSchema),
  alertEvaluation: data(alertEvaluationSchema),
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
  fleetEntries: data(fleetEntriesPageSchema),
  fleetEntry: data(z.object({ entry: fleetEntrySchema })),
  fleetEntryLifted: data(fleetLiftSchema.extend({ entry: fleetEntrySchema })),
  fleetServerBans: data(fleetServerBansSchema),
  fleetAddress: data(fleetAddressSchema),
  fleetLifted: data(fleetLiftSchema),
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
  rollouts: data(rolloutListSchema),
  rollout: data(z.object({ rollout: rolloutSchema })),
  rolloutDetail: data(rolloutDetailSchema),
  error: errorEnvelopeSchema,
};
export type DashboardResponseName = keyof typeof dashboardResponses;

/** The `data` of a dashboard answer, by its name in `dashboardResponses`: what the web's fetchers resolve to. */
export type DashboardData<N extends DashboardResponseName> =
  z.infer<(typeof dashboardResponses)[N]> extends { data: infer D } ? D : never;

/** `GET /api/servers/:id/section?name=N` answers this `data`. */
export type DashboardSection<N extends SectionName> = z.infer<(typeof sectionSchemas)[N]>;
