import { z } from 'zod';
import { updateOfferSchema, updateReportSchema } from './agent-update-schemas.js';
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
  /**
   * Where this agent is with an update it was offered (docs/fleet.md, "Agent updates"), sent until a
   * check-in carrying it is answered 200; optional: agents before updates send none.
   */
  update: updateReportSchema.optional(),
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
  /** The update this agent should apply now (docs/fleet.md, "Agent updates"); offered until the agent reports on it. */
  update: updateOfferSchema.optional(),
});
export type CheckinAnswer = z.infer<typeof checkinAnswerSchema>;

const SAMPLE_KEYS = Object.keys(sampleSchema.shape);
const BAN_KEYS = Object.keys(checkinBanSchema.shape);
const IPV4 = z.regexes.ipv4;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype;
const isString = (v: unknown, min: number, max: number) => typeof v === 'string' && v.length >= min && v.length <= max;
const isFiniteNumber = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const isNonNegative = (v: unknown) => isFiniteNumber(v) && v >= 0;
const isPercent = (v: unknown) => isFiniteNumber(v) && v >= 0 && v <= 100;
const isEpochMs = (v: unknown) => Number.isSafeInteger(v) && (v as number) > 0;

/** Whether the object's first keys are `order`'s, in that order, and (with `more`) only then any others. */
function startsWithKeys(value: Record<string, unknown>, order: readonly string[], more: boolean) {
  let i = 0;
  for (const key in value) {
    if (i < order.length ? key !== order[i] : !more) return false;
    i += 1;
  }
  return i >= order.length;
}

function isSmallJson(v: unknown, max: number) {
  if (!isObject(v)) return false;
  for (const key in v) if (key.length > 64) return false;
  return JSON.stringify(v).length <= max;
}

/** The sample as zod answers it (its eight figures first, in order, then the rest as sent), or undefined when zod must tell. */
function checkedSample(v: unknown): Record<string, unknown> | undefined {
  if (!isObject(v)) return undefined;
  if (!isEpochMs(v.ts) || !isPercent(v.cpu_pct) || !isPercent(v.disk_used_pct)) return undefined;
  if (!isNonNegative(v.mem_used_mb) || !isNonNegative(v.mem_total_mb) || !isNonNegative(v.load1)) return undefined;
  if (!isNonNegative(v.rx_bps) || !isNonNegative(v.tx_bps)) return undefined;
  for (const key in v) {
    const x = v[key];
    if (!(x === null || isFiniteNumber(x) || isString(x, 0, 256)) && !SAMPLE_KEYS.includes(key)) return undefined;
  }
  if (startsWithKeys(v, SAMPLE_KEYS, true)) return v;
  const ordered: Record<string, unknown> = {};
  for (const key of SAMPLE_KEYS) ordered[key] = v[key];
  for (const key in v) if (!SAMPLE_KEYS.includes(key)) ordered[key] = v[key];
  return ordered;
}

/** The samples as zod answers them, or undefined. */
function checkedSamples(v: unknown): Record<string, unknown>[] | undefined {
  if (!Array.isArray(v) || v.length > MAX_PAST_SAMPLES) return undefined;
  const out: Record<string, unknown>[] = [];
  for (const item of v) {
    const sample = checkedSample(item);
    if (sample === undefined) return undefined;
    out.push(sample);
  }
  return out;
}

/** The bans as zod answers them (each with the schema's keys, in order, and no others), or undefined. */
function checkedBans(v: unknown): CheckinBan[] | undefined {
  if (!Array.isArray(v) || v.length > MAX_CHECKIN_BANS) return undefined;
  const out: CheckinBan[] = [];
  for (const b of v) {
    if (!isObject(b)) return undefined;
    const { ip, kind, attack_id, pattern, at, ttl_s } = b;
    if (!isString(ip, 1, 64) || !isString(kind, 1, 40) || !isEpochMs(at)) return undefined;
    if (!(attack_id === null || isString(attack_id, 0, 64)) || !(pattern === null || isString(pattern, 0, 64))) {
      return undefined;
    }
    if (!(ttl_s === null || (Number.isSafeInteger(ttl_s) && (ttl_s as number) >= 1))) return undefined;
    out.push(
      startsWithKeys(b, BAN_KEYS, false)
        ? (b as CheckinBan)
        : ({ ip, kind, attack_id, pattern, at, ttl_s } as CheckinBan),
    );
  }
  return out;
}

/**
 * What `checkinRequestSchema` would answer for the body, without its deep copy: the schema's keys
 * in its order (others dropped, as zod drops them), the JSON sections and the samples and bans
 * as sent unless zod would reorder their keys. Undefined when it cannot tell at once: anything
 * refused, an IPv6 address, an `update` report; zod then decides and names the field.
 */
function checkedAsIs(body: unknown): CheckinRequest | undefined {
  if (!isObject(body) || 'update' in body) return undefined;
  const b = body;
  if (!isString(b.agent_version, 1, 64) || !isString(b.hostname, 1, 253)) return undefined;
  const ip = b.public_ip;
  if (!(ip === null || (ip === undefined && !('public_ip' in b)) || (typeof ip === 'string' && IPV4.test(ip)))) {
    return undefined;
  }
  if (!isSmallJson(b.facts, 16_384)) return undefined;
  const sample = checkedSample(b.sample);
  if (sample === undefined) return undefined;
  const out: Record<string, unknown> = { agent_version: b.agent_version, hostname: b.hostname };
  if ('public_ip' in b) out.public_ip = ip;
  out.facts = b.facts;
  out.sample = sample;
  if ('past_samples' in b) {
    const past = checkedSamples(b.past_samples);
    if (past === undefined) return undefined;
    out.past_samples = past;
  }
  if ('protection' in b) {
    if (!isSmallJson(b.protection, 16_384)) return undefined;
    out.protection = b.protection;
  }
  if ('alerter' in b) {
    if (!isSmallJson(b.alerter, 4096)) return undefined;
    out.alerter = b.alerter;
  }
  if ('bans' in b) {
    const bans = checkedBans(b.bans);
    if (bans === undefined) return undefined;
    out.bans = bans;
  }
  return out as CheckinRequest;
}

/**
 * `checkinRequestSchema.safeParse`, without zod's copy of the body when the body is plainly valid
 * (the check-in path, docs/performance.md): the same rules, and for anything else zod itself, so a
 * refused body gets zod's issue naming the field.
 */
export function parseCheckinRequest(
  body: unknown,
): { success: true; data: CheckinRequest } | { success: false; error: z.ZodError } {
  const data = checkedAsIs(body);
  if (data !== undefined) return { success: true, data };
  const parsed = checkinRequestSchema.safeParse(body);
  return parsed.success ? { success: true, data: parsed.data } : { success: false, error: parsed.error };
}
