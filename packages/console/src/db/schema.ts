import type { Generated, Insertable, Kysely, Selectable } from 'kysely';

/** Table types. Timestamps are epoch milliseconds; flags are 0/1 integers so both dialects agree. */
export interface AccountsTable {
  id: Generated<number>;
  email: string;
  name: string;
  password_hash: string;
  role: 'user' | 'admin';
  permissions: string; // JSON array of Permission
  disabled_at: number | null;
  created_at: number;
}

export interface SessionsTable {
  id_hash: string;
  account_id: number;
  created_at: number;
  expires_at: number;
}

export interface AccessTokensTable {
  id: Generated<number>;
  account_id: number;
  name: string;
  token_hash: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
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
  created_at: number;
}

export interface ProductsTable {
  id: Generated<number>;
  account_id: number;
  catalog_id: number;
  created_at: number;
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
  tls_fingerprint: string | null; // SHA-256 of the agent's certificate, pinned when the agent serves https
  created_at: number;
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

export interface JobLeasesTable {
  name: string;
  holder: string;
  expires_at: number;
}

export interface SigningKeysTable {
  id: Generated<number>;
  account_id: number;
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
  account_id: number | null;
  kind: 'signed_request_failed' | 'login_failed';
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
  author_id: number;
  author_role: 'user' | 'admin';
  body: string;
  created_at: number;
}

export interface AccountWebhooksTable {
  account_id: number;
  url: string;
  secret_enc: string;
  updated_at: number;
}

export interface NotificationsTable {
  id: Generated<number>;
  account_id: number;
  kind: string;
  payload: string; // the exact JSON body delivered
  status: 'queued' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  locked_until: number;
  created_at: number;
  delivered_at: number | null;
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

export interface DB {
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
  job_leases: JobLeasesTable;
  accounts: AccountsTable;
  sessions: SessionsTable;
  access_tokens: AccessTokensTable;
  catalog_items: CatalogItemsTable;
  products: ProductsTable;
  servers: ServersTable;
  samples: SamplesTable;
  benchmark_runs: BenchmarkRunsTable;
}

export type Database = Kysely<DB>;
export type AccountRow = Selectable<AccountsTable>;
export type NewAccount = Insertable<AccountsTable>;
export type ServerRow = Selectable<ServersTable>;
export type SampleRow = Selectable<SamplesTable>;
export type BenchmarkRunRow = Selectable<BenchmarkRunsTable>;
