import { z } from 'zod';
import { checkinBansOutcomeSchema } from './fleet.js';

/**
 * The check-in: what an agent sends to `POST /api/agent/checkin` every `interval_s` seconds and
 * what the console answers (docs/fleet.md, "Check-ins"). The console validates requests with
 * `checkinRequestSchema`; the agent builds a `CheckinRequest` (a type only, so the agent does not
 * load zod for it).
 */
const finite = z.number('expected a number').refine(Number.isFinite, 'expected a finite number');
const nonNegative = finite.refine((n) => n >= 0, 'must not be negative');
const percent = finite.refine((n) => n >= 0 && n <= 100, 'expected 0 to 100');
const smallJson = (max: number) =>
  z.record(z.string().max(64), z.unknown()).refine((v) => JSON.stringify(v).length <= max, `larger than ${max} bytes`);

/**
 * A sample. Beyond the fixed figures, the console reads `attacks_active` (attacks in progress) and
 * `attacks_total` (detected since the agent started) for its attack alert rules (docs/alerts.md).
 */
const sampleSchema = z
  .object({
    ts: z.number().int('expected epoch milliseconds').positive('expected epoch milliseconds'),
    cpu_pct: percent,
    mem_used_mb: nonNegative,
    mem_total_mb: nonNegative,
    disk_used_pct: percent,
    load1: nonNegative,
    rx_bps: nonNegative,
    tx_bps: nonNegative,
  })
  .catchall(z.union([finite, z.string().max(256), z.null()]));
export type CheckinSample = z.infer<typeof sampleSchema>;

/** At most this many `past_samples` in one check-in; an agent with more sends them over several. */
export const MAX_PAST_SAMPLES = 120;

/** At most this many `bans` in one check-in; an agent with more sends them over several. */
export const MAX_CHECKIN_BANS = 200;

/**
 * One address the agent banned on its own (an attack or a block pattern), reported once in the
 * next check-ins so the console can propagate it under the account's fleet policies
 * (docs/protection.md, "Fleet policies"). Entries the console put there are never reported.
 */
export const checkinBanSchema = z.object({
  ip: z.string().min(1).max(64),
  /** The attack's kind: `log_pattern` for a block pattern, `conn_flood`, `syn_flood`, … otherwise. */
  kind: z.string().min(1).max(40),
  attack_id: z.string().max(64).nullable(),
  /** The block pattern's name when `kind` is `log_pattern`. */
  pattern: z.string().max(64).nullable(),
  at: z.number().int('expected epoch milliseconds').positive('expected epoch milliseconds'),
  /**
   * How long the agent bans it; null: for good. The console propagates a ban for at most
   * REPORTED_BAN_MAX_TTL_S (30 days): a longer or null ttl is clamped, not refused.
   */
  ttl_s: z.number().int().min(1).nullable(),
});
export type CheckinBan = z.infer<typeof checkinBanSchema>;

export const checkinRequestSchema = z.object({
  agent_version: z.string().min(1).max(64),
  hostname: z.string().min(1).max(253),
  public_ip: z.union([z.ipv4(), z.ipv6()]).nullable().optional(),
  facts: smallJson(16_384),
  sample: sampleSchema,
  /**
   * Samples taken while the console could not be reached, oldest first, stored at their own
   * timestamps (docs/agent.md, "Check-ins"). Optional: agents before it send none.
   */
  past_samples: z.array(sampleSchema).max(MAX_PAST_SAMPLES, `at most ${MAX_PAST_SAMPLES} samples`).optional(),
  protection: smallJson(16_384).optional(),
  alerter: smallJson(4096).optional(),
  /** Bans since the last check-in that arrived; optional: agents before fleet policies send none. */
  bans: z.array(checkinBanSchema).max(MAX_CHECKIN_BANS, `at most ${MAX_CHECKIN_BANS} bans`).optional(),
});
export type CheckinRequest = z.infer<typeof checkinRequestSchema>;

/** A benchmark run handed to the agent in a check-in answer; it reports to `report_path` with `token`. */
export const benchmarkJobSchema = z.object({
  kind: z.literal('benchmark'),
  run_id: z.number().int().positive(),
  label: z.string().max(100),
  token: z.string(),
  report_path: z.string(),
});
export type BenchmarkJob = z.infer<typeof benchmarkJobSchema>;

/** The `data` of the check-in answer: the interval the agent should use and the jobs waiting for it. */
export const checkinAnswerSchema = z.object({
  interval_s: z.number().int().min(1).max(86_400),
  jobs: z.array(benchmarkJobSchema),
  /** What became of the reported `bans` (present when the check-in reported any): accepted, and refused by reason. */
  bans: checkinBansOutcomeSchema.optional(),
});
export type CheckinAnswer = z.infer<typeof checkinAnswerSchema>;
