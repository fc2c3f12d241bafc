import type { ChannelKind, Metric, RuleKind, SecurityEventKind } from '@palisade/protocol';
import type { Generated, Kysely, Selectable } from 'kysely';
import type { TeamTables } from './schema-teams.js';

// The team and identity tables, and who a request acts as, are in schema-teams.ts.
export * from './schema-teams.js';

/** Table types. Timestamps are epoch milliseconds; flags are 0/1 integers so both dialects agree. */

export interface AccessTokensTable {
  id: Generated<number>;
  account_id: number;
  /** The person whose token it is: it acts in the team `account_id` only, with their role there. */
  person_id: number;
  name: string;
  token_hash: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
}

export interface EnrolmentTokensTable {
  id: Generated<number>;
  account_id: number;
  product_id: number;
  name: string;
  token_hash: string;
  last4: string;
  max_uses: number;
  uses: number;
  expires_at: number;
  revoked_at: number | null;
  created_at: number;
}

export interface CatalogItemsTable {
  id: Generated<number>;
  sku: string;
  name: string;
  description: string;
  price_cents: number;
  currency: string;
  interval: 'month' | 'year';
  server_limit: number;
  features: string; // JSON array of strings
  /** JSON array of capability keys the console enforces: `benchmarks` (docs/decisions.md). */
  includes: Generated<string>;
  created_at: number;
}

export interface ProductsTable {
  id: Generated<number>;
  account_id: number;
  catalog_id: number;
  created_at: number;
  /** Set when the owner removed it; kept for the tickets that name it. */
  removed_at: number | null;
  /** 1 on the account's one free-plan product, else null (unique per account). */
  free_slot: number | null;
}

export interface ServersTable {
  id: Generated<number>;
  account_id: number;
  product_id: number;
  name: string;
  api_url: string;
  api_key_enc: string;
  hostname: string | null;
  public_ip: string | null;
  facts: string; // JSON object
  agent_version: string | null;
  daemon_token_hash: string | null;
  last_seen: number | null;
  latest_sample: string | null; // JSON of the newest sample, served as v1 latest_sample
  score_base: string | null; // JSON of the sample-based score components, refreshed at each check-in
  score_base_total: number | null; // sum of score_base's components, so lists need not parse JSON
  score_window_mark: number | null; // set anew by each check-in: tells a process its in-memory score window is current
  tls_fingerprint: string | null; // SHA-256 of the agent's certificate, pinned when the agent serves https
  created_at: number;
  last_call_ok_at: number | null; // the console's last call to the agent that it answered
  last_call_error_at: number | null; // the console's last call to the agent that failed
  last_call_error: string | null; // why that call failed, in words (never the agent address)
  attacks_active: number | null; // active attacks in the latest check-in; null when the agent did not say
  tags: Generated<string>; // JSON array of the user's tags (docs/fleet.md, "Tags")
  connect: Generated<'direct' | 'outbound'>; // how the console reaches the agent (docs/agent.md, "Outbound link")
}

/** Which console process holds each server's outbound link, without Redis (docs/deploy.md). */
export interface LinkHoldersTable {
  server_id: number;
  process: string;
  expires_at: number;
}

/** A relayed link call or answer too large for a NOTIFY payload; the receiver deletes it as it reads it. */
export interface LinkRelayMessagesTable {
  id: Generated<number>;
  body: string;
  created_at: number;
}

/** docs/protection.md, "Audit log": added, never updated; removed by age (PALISADE_AUDIT_RETENTION_DAYS). */
export interface AuditLogTable {
  id: Generated<number>;
  account_id: number;
  at: number;
  actor_kind: 'session' | 'token' | 'signing_key' | 'console';
  actor_id: number | null;
  actor: string; // who, in words: an e-mail address, a token's name, "the console"
  ip: string | null;
  action: string; // e.g. control.write
  server_id: number | null;
  server_name: string | null;
  method: string | null;
  path: string | null;
  summary: string; // what changed, secrets removed, at most AUDIT_SUMMARY_MAX characters
  status: number; // the agent's answer, or the console's refusal
  outcome: string;
}

/** docs/protection.md, "Fleet policies". */
export interface FleetPoliciesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  trigger: 'attack' | 'pattern' | 'any';
  scope_kind: 'all' | 'tags' | 'product';
  scope_tags: string | null; // comma-separated server tags (a tag never holds a comma)
  scope_product_id: number | null;
  duration_s: number | null; // null: as long as the first server's ban
  enabled: number;
  allow_private: Generated<number>; // 1: reported bans of private addresses propagate too
  created_at: number;
  updated_at: number;
}

/** Per server: the minute its reported bans are counted in, and the bans refused so far (docs/protection.md). */
export interface FleetBanReportsTable {
  server_id: number;
  window_start: number;
  window_count: number;
  refused: string; // JSON { reason: count }
  refused_total: number;
  last_refused_at: number | null;
  last_refused: string | null;
}

export interface FleetEntriesTable {
  id: Generated<number>;
  account_id: number;
  list: 'black' | 'white';
  address: string; // canonical IP or CIDR (packages/protocol/src/networks.ts)
  reason: string;
  origin_kind: 'attack' | 'pattern' | 'manual';
  origin_server_id: number | null;
  origin_server_name: string | null;
  origin_event: string | null;
  policy_id: number | null;
  scope_kind: 'all' | 'tags' | 'product';
  scope_tags: string | null;
  scope_product_id: number | null;
  created_by: string;
  created_at: number;
  expires_at: number | null;
  lifted_at: number | null;
  lifted_by: string | null;
  active_key: string | null;
}

export interface FleetApplicationsTable {
  id: Generated<number>;
  entry_id: number;
  server_id: number;
  account_id: number;
  want: 'present' | 'absent';
  force: number; // 1: removed even when the server had the address before the fleet entry
  state: 'pending' | 'applied' | 'failed';
  reason: string | null;
  attempts: number;
  next_attempt_at: number;
  locked_until: number;
  applied_at: number | null;
  preexisting: number; // 1: the server held the address already, so leaving the scope keeps it
  updated_at: number;
}

export interface SamplesTable {
  id: Generated<number>;
  server_id: number;
  ts: number;
  resolution: 'raw' | '5m' | '1h';
  cpu_pct: number;
  mem_used_mb: number;
  mem_total_mb: number;
  disk_used_pct: number;
  load1: number;
  rx_bps: number;
  tx_bps: number;
  extra: string; // JSON object of further keys the agent reported
}

export interface BenchmarkRunsTable {
  id: Generated<number>;
  server_id: number;
  label: string;
  status: 'pending' | 'running' | 'done' | 'failed';
  token_hash: string;
  log: string;
  score_cpu: number | null;
  score_disk: number | null;
  score_network: number | null;
  score_stability: number | null;
  score_total: number | null;
  verified: number;
  checks: string; // JSON array of {name, ok, detail}
  hardware: string; // JSON object
  error: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
  updated_at: number;
  handed_at: number | null;
}

export interface RateLimitWindowsTable {
  key: string;
  count: number;
  window_end: number;
}

/** One row (id 1): how many changes were published to other processes (services/coherence/). */
export interface ChangeCounterTable {
  id: number;
  n: number;
}

export interface JobLeasesTable {
  name: string;
  holder: string;
  expires_at: number;
}

/** The last finished round of a periodic job (migration 0025). */
export interface JobRoundsTable {
  name: string;
  holder: string;
  started_at: number;
  finished_at: number;
}

export interface SigningKeysTable {
  id: Generated<number>;
  account_id: number;
  person_id: number;
  name: string;
  key_hash: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
}

export interface Svc1NoncesTable {
  key_id: number;
  ts: number;
  nonce: string;
  created_at: number;
}

export interface Svc1SignaturesTable {
  key_id: number;
  signature: string;
  created_at: number;
}

export interface SecurityEventsTable {
  id: Generated<number>;
  /** The team (a signing key's events). */
  account_id: number | null;
  /** The person (sign-ins, two-factor, password): listed to them in every team. */
  person_id: number | null;
  kind: SecurityEventKind;
  reason: string;
  key_last4: string | null;
  method: string;
  path: string;
  ip: string;
  created_at: number;
}

export interface TicketsTable {
  id: Generated<number>;
  account_id: number;
  product_id: number;
  ref: string;
  subject: string;
  status: 'open' | 'closed';
  created_at: number;
  updated_at: number;
}

export interface TicketMessagesTable {
  id: Generated<number>;
  ticket_id: number;
  /** The team the message was written in (the ticket's, or a support admin's own). */
  author_id: number;
  /** The person who wrote it; null for messages from before migration 0030, or of a closed account. */
  author_person_id: number | null;
  author_role: 'user' | 'admin';
  body: string;
  created_at: number;
}

export interface AccountWebhooksTable {
  account_id: number;
  url: string;
  secret_enc: string;
  updated_at: number;
  /** Failed deliveries in a row; 0 after a success or a new URL. Healthy endpoints are served first. */
  failures: Generated<number>;
  last_success_at: number | null;
}

export interface NotificationsTable {
  id: Generated<number>;
  account_id: number;
  kind: string;
  payload: string; // the exact JSON body delivered
  /** `parked`: the account has no webhook; not polled until one is set (docs/decisions.md). */
  status: 'queued' | 'parked' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  locked_until: number;
  created_at: number;
  delivered_at: number | null;
  /** 0: the account's signed webhook; otherwise an alert channel (docs/alerts.md). */
  channel_id: Generated<number>;
}

export interface NotificationAttemptsTable {
  id: Generated<number>;
  notification_id: number;
  account_id: number;
  at: number;
  url: string;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

export type AlertChannelKind = ChannelKind;

export interface AlertChannelsTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  kind: AlertChannelKind;
  /** The sealed URL (slack, discord) or address (email); null for `webhook`, which is the account's signed webhook. */
  target_enc: string | null;
  /** What the settings page shows of the target: the host of a URL, the address of an e-mail. */
  target_hint: string;
  failures: Generated<number>;
  last_success_at: number | null;
  last_error: string | null;
  created_at: number;
  /** When the recipient confirmed (an e-mail channel); other kinds are confirmed when added. Null: waiting. */
  confirmed_at: number | null;
  /** SHA-256 of the single-use token in the confirmation link; null once used. */
  confirm_token_hash: string | null;
  /** When the last confirmation mail was sent. */
  confirm_sent_at: number | null;
}

export type AlertRuleKind = RuleKind;
export type AlertMetric = Metric;

export interface AlertRulesTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  kind: AlertRuleKind;
  metric: AlertMetric | null;
  threshold: number | null;
  minutes: number;
  repeat_minutes: number;
  server_ids: string | null; // JSON array of server ids; null: every server of the account
  tags: string | null; // JSON array of server tags the rule also covers (docs/alerts.md, "Scope")
  channel_ids: string; // JSON array of alert channel ids
  enabled: number;
  created_at: number;
  /** When the rule last started applying as it is (created, enabled, or its condition changed): event rules count from here. */
  active_since: number | null;
}

export interface AlertStatesTable {
  rule_id: number;
  server_id: number;
  firing: number;
  since: number;
  last_notified_at: number | null;
  value: number | null;
}

export interface AlertMutesTable {
  server_id: number;
  account_id: number;
  until: number;
}

/** Every table: the team and identity tables (schema-teams.ts) and the rest. */
export interface DB extends TeamTables {
  alert_channels: AlertChannelsTable;
  alert_rules: AlertRulesTable;
  alert_states: AlertStatesTable;
  alert_mutes: AlertMutesTable;
  signing_keys: SigningKeysTable;
  svc1_nonces: Svc1NoncesTable;
  svc1_signatures: Svc1SignaturesTable;
  security_events: SecurityEventsTable;
  tickets: TicketsTable;
  ticket_messages: TicketMessagesTable;
  account_webhooks: AccountWebhooksTable;
  notifications: NotificationsTable;
  notification_attempts: NotificationAttemptsTable;
  rate_limit_windows: RateLimitWindowsTable;
  change_counter: ChangeCounterTable;
  job_leases: JobLeasesTable;
  job_rounds: JobRoundsTable;
  access_tokens: AccessTokensTable;
  enrolment_tokens: EnrolmentTokensTable;
  catalog_items: CatalogItemsTable;
  products: ProductsTable;
  servers: ServersTable;
  samples: SamplesTable;
  audit_log: AuditLogTable;
  fleet_policies: FleetPoliciesTable;
  fleet_entries: FleetEntriesTable;
  fleet_applications: FleetApplicationsTable;
  fleet_ban_reports: FleetBanReportsTable;
  benchmark_runs: BenchmarkRunsTable;
  link_holders: LinkHoldersTable;
  link_relay_messages: LinkRelayMessagesTable;
  agent_rollouts: AgentRolloutsTable;
  agent_rollout_servers: AgentRolloutServersTable;
}

export type Database = Kysely<DB>;
/** docs/fleet.md, "Agent updates": a rollout of one agent version, in waves. */
export interface AgentRolloutsTable {
  id: Generated<number>;
  account_id: number;
  version: string;
  tag: string | null;
  waves: string; // as formatRolloutWaves writes them: 1,10%,100%
  health_timeout_s: number;
  state: 'running' | 'completed' | 'failed' | 'cancelled';
  current_wave: number; // 0-based
  reason: string | null;
  created_by: string; // who started it, in words
  created_at: number;
  finished_at: number | null;
}

/** One server's place in a rollout (UPDATE_SERVER_STATES). */
export interface AgentRolloutServersTable {
  rollout_id: number;
  server_id: number;
  wave: number;
  state: 'pending' | 'offered' | 'downloading' | 'applying' | 'updated' | 'rolled_back' | 'failed' | 'skipped';
  from_version: string | null;
  reason: string | null;
  offered_at: number | null;
  updated_at: number;
}

export type ServerRow = Selectable<ServersTable>;
export type EnrolmentTokenRow = Selectable<EnrolmentTokensTable>;
export type SampleRow = Selectable<SamplesTable>;
export type BenchmarkRunRow = Selectable<BenchmarkRunsTable>;
