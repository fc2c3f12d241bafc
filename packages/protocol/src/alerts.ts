import { z } from 'zod';

/** The console's alert answers (docs/alerts.md): rules, channels, mutes, history, a channel test. */

export const RULE_KINDS = [
  'offline',
  'late',
  'unreachable',
  'metric',
  'score',
  'attack',
  'benchmark_unverified',
  'agent_outdated',
] as const;
/** Rules that send one notification per event (a benchmark run), never `alert.resolved` or `alert.repeat`. */
export const EVENT_RULE_KINDS: readonly RuleKind[] = ['benchmark_unverified'];
export const ALERT_METRICS = ['cpu', 'memory', 'disk', 'load'] as const;
export const CHANNEL_KINDS = ['webhook', 'slack', 'discord', 'email'] as const;
export type RuleKind = (typeof RULE_KINDS)[number];
export type Metric = (typeof ALERT_METRICS)[number];
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

const epochMs = z.number().int();

export const alertRuleSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  kind: z.enum(RULE_KINDS),
  metric: z.enum(ALERT_METRICS).nullable(),
  threshold: z.number().nullable(),
  minutes: z.number().int(),
  repeat_minutes: z.number().int(),
  /** null: every server of the account. */
  server_ids: z.array(z.number().int()).nullable(),
  /** Servers carrying any of these tags are covered too; null with server_ids null: every server. */
  tags: z.array(z.string()).nullable(),
  channel_ids: z.array(z.number().int()),
  enabled: z.boolean(),
  created_at: epochMs,
});
export type AlertRule = z.infer<typeof alertRuleSchema>;

export const alertChannelSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  kind: z.enum(CHANNEL_KINDS),
  /** Where it sends, shortened for display (never a secret part of a URL). */
  target: z.string(),
  failures: z.number().int(),
  failing: z.boolean(),
  last_success_at: epochMs.nullable(),
  last_error: z.string().nullable(),
  created_at: epochMs,
  /**
   * False while an e-mail channel waits for its recipient to open the link in the confirmation
   * e-mail: it receives no alerts and no tests until then (docs/alerts.md, "E-mail channels").
   */
  confirmed: z.boolean(),
  /** When the last confirmation e-mail was sent; null for channels that need none. */
  confirmation_sent_at: epochMs.nullable(),
});
export type AlertChannel = z.infer<typeof alertChannelSchema>;

export const alertHistoryEntrySchema = z.object({
  id: z.number().int(),
  kind: z.string(),
  title: z.string(),
  body: z.string(),
  rule_id: z.number().int().nullable(),
  server_id: z.number().int().nullable(),
  /** 0: the account's signed webhook. */
  channel_id: z.number().int(),
  channel: z.string(),
  channel_kind: z.enum(CHANNEL_KINDS).nullable(),
  status: z.enum(['queued', 'parked', 'delivered', 'failed']),
  attempts: z.number().int(),
  created_at: epochMs,
  delivered_at: epochMs.nullable(),
  last_error: z.string().nullable(),
});
export type AlertHistoryEntry = z.infer<typeof alertHistoryEntrySchema>;

export const channelTestResultSchema = z.object({
  delivered: z.boolean(),
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number(),
  /** The channel after the test (its failure count and last error). */
  channel: alertChannelSchema,
});
export type ChannelTestResult = z.infer<typeof channelTestResultSchema>;

export const alertMuteSchema = z.object({ server_id: z.number().int(), until: epochMs });

/**
 * When the console last evaluated alert rules, by any console process (docs/alerts.md, "Timing"):
 * `late` when no round finished for one interval plus 30 s.
 */
export const alertEvaluationSchema = z.object({
  last_round_at: epochMs.nullable(),
  interval_s: z.number().int(),
  late: z.boolean(),
  as_of: epochMs,
});
export type AlertEvaluation = z.infer<typeof alertEvaluationSchema>;
export type AlertMute = z.infer<typeof alertMuteSchema>;
