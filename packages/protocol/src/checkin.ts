import { z } from 'zod';

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
});
export type CheckinAnswer = z.infer<typeof checkinAnswerSchema>;
