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

export const checkinRequestSchema = z.object({
  agent_version: z.string().min(1).max(64),
  hostname: z.string().min(1).max(253),
  public_ip: z.union([z.ipv4(), z.ipv6()]).nullable().optional(),
  facts: smallJson(16_384),
  sample: z
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
    .catchall(z.union([finite, z.string().max(256), z.null()])),
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
