import type { Account, ScoreComponents, ServerDetail, ServerSummary } from '@palisade/protocol';

/**
 * Dashboard-only answers of the console. The v1 shapes come from `@palisade/protocol`; these extend
 * them with what only the dashboard routes add. Until the protocol package exports the dashboard
 * DTOs too, this file is the one place they are written down (see docs/dashboard.md).
 */
export type { ScoreComponents, ServerSummary };

export type Permission = 'control.read' | 'control.edit';

export interface Me extends Account {
  permissions: Permission[];
  created_at: number;
}

export interface DashboardServer extends ServerDetail {
  product_id: number;
  agent_version: string | null;
  enrolled: boolean;
  /** The pinned SHA-256 of the agent's own certificate, for an https agent; null otherwise. */
  tls_fingerprint: string | null;
}

export interface ConnectionCheck {
  reachable: boolean;
  status: number | null;
  latency_ms: number | null;
  agent_version?: string;
  error?: string;
}

export interface Enrollment {
  console_url: string;
  token: string;
  command: string;
}

export interface ScoreSection {
  score: number;
  components: ScoreComponents;
  notes: string[];
  weights: ScoreComponents;
}

export interface FactsSection {
  hostname: string | null;
  public_ip: string | null;
  agent_version: string | null;
  facts: Record<string, unknown>;
}

export type HistoryRange = '1h' | '24h' | '7d' | '30d';

export interface HistorySample {
  ts: number;
  cpu_pct: number;
  mem_used_mb: number;
  mem_total_mb: number;
  disk_used_pct: number;
  load1: number;
  rx_bps: number;
  tx_bps: number;
}

export interface HistorySection {
  range: HistoryRange;
  from: number;
  to: number;
  bucket_ms: number;
  samples: HistorySample[];
}

export interface VerificationCheck {
  name: string;
  ok: boolean;
  detail: string;
}

export interface BenchmarkRunView {
  id: number;
  label: string;
  status: 'pending' | 'running' | 'done' | 'failed';
  scores: {
    cpu: number | null;
    disk: number | null;
    network: number | null;
    stability: number | null;
    total: number | null;
  };
  verified: boolean;
  checks: VerificationCheck[];
  hardware: Record<string, unknown>;
  log: string;
  error: string | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

/** `section?name=attacks`: the agent's attack list when it has one. */
export type AttacksSection = { available: false; error: string } | ({ available: true } & Record<string, unknown>);

/** The agent's /metrics snapshot (DESIGN §4), passed through the console. */
export interface AgentMetrics {
  ts: number;
  agent: { version: string; uptime_s: number };
  host: {
    hostname: string;
    os: string;
    kernel: string;
    arch: string;
    cores: number;
    mem_total_mb?: number;
    public_ip: string | null;
    uptime_s?: number | null;
  };
  cpu: { pct: number | null; load1: number | null; load5: number | null; load15: number | null };
  memory: { total_mb: number | null; used_mb: number | null; pct: number | null };
  disks: { mount: string; fs?: string; total_mb?: number; used_mb?: number; pct: number }[];
  network: { rx_bps: number | null; tx_bps: number | null; rx_pps: number | null; tx_pps: number | null };
  protection: { backend: string; [key: string]: unknown };
  attacks: { active: number; total: number; [key: string]: unknown };
  alerter?: {
    webhook_set: boolean;
    queued: number;
    sent: number;
    dropped: number;
    last_success_at: number | null;
    last_error: string | null;
  };
}

export interface AccessToken {
  id: number;
  name: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
}

export interface CatalogItem {
  id: number;
  sku: string;
  name: string;
  description: string;
  price_cents: number;
  currency: string;
  interval: string;
  server_limit: number;
  features: string[];
}

export interface Product {
  id: number;
  catalog_id: number;
  sku: string;
  name: string;
  price_cents: number;
  currency: string;
  interval: string;
  server_limit: number;
  servers_used: number;
  created_at: number;
}

export interface BillingSummary {
  items: {
    product_id: number;
    sku: string;
    name: string;
    price_cents: number;
    currency: string;
    interval: string;
    servers_used: number;
    server_limit: number;
  }[];
  totals: { currency: string; interval: string; amount_cents: number }[];
}

/** Signing keys (`svck_…`); being built: fields follow the access tokens'. */
export interface SigningKey {
  id: number;
  name: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
}

export interface SecurityEvent {
  id: number;
  kind: string;
  reason?: string | null;
  ip?: string | null;
  detail?: string | null;
  created_at: number;
}

export interface WebhookDelivery {
  id: number;
  kind?: string;
  ticket_ref?: string;
  status?: string;
  response_status?: number | null;
  error?: string | null;
  attempts?: number;
  created_at: number;
  [key: string]: unknown;
}

export interface WebhookSettings {
  url: string | null;
  secret?: string;
  deliveries?: WebhookDelivery[];
}

export interface Ticket {
  id: number;
  ref: string;
  product_id: number | null;
  subject: string;
  status: string;
  created_at: number;
  updated_at?: number;
  account_email?: string;
  account_name?: string;
}

export interface TicketMessage {
  id: number;
  author_role?: string;
  author_name?: string;
  from_admin?: boolean;
  body?: string;
  message?: string;
  created_at: number;
}

export interface TicketWithMessages extends Ticket {
  messages: TicketMessage[];
}
