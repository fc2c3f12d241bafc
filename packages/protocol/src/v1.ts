import { z } from 'zod';
import { teamRoleSchema } from './roles.js';

/** The team a credential or session acts in, with the person's role there (docs/teams.md). */
export const actingTeamSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  role: teamRoleSchema,
});

/**
 * The v1 resources, as docs/api.md and the OpenAPI document publish them; the console validates its answers' shape with them in tests.
 * The account is the person (`role` is their console-wide role) and, added to the seed's fields, the team it acts in.
 */
export const accountSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  email: z.string(),
  role: z.string(),
  team: actingTeamSchema,
});

export const serverSummarySchema = z.object({
  id: z.number().int(),
  label: z.string(),
  hostname: z.string(),
  online: z.boolean(),
  score: z.number().int().min(0).max(1000),
  last_seen: z.number().int(),
  public_ip: z.string().nullable(),
});

export const scoreComponentsSchema = z.object({
  cpu: z.number().int(),
  memory: z.number().int(),
  disk: z.number().int(),
  network: z.number().int(),
  stability: z.number().int(),
  freshness: z.number().int(),
});

export const latestSampleSchema = z
  .object({ ts: z.number().int(), cpu_pct: z.number(), mem_used_mb: z.number() })
  .catchall(z.unknown());

export const serverDetailSchema = serverSummarySchema.extend({
  created_at: z.number().int(),
  facts: z.record(z.string(), z.unknown()),
  score_components: scoreComponentsSchema,
  score_notes: z.array(z.string()),
  latest_sample: latestSampleSchema.nullable(),
});

const sectionScore = z.number().min(0).max(100).nullable();
export const benchmarkRunSchema = z.object({
  id: z.number().int(),
  label: z.string(),
  status: z.literal('done'),
  scores: z.object({
    cpu: sectionScore,
    disk: sectionScore,
    network: sectionScore,
    stability: sectionScore,
    total: sectionScore,
  }),
  verified: z.boolean(),
  finished_at: z.number().int(),
});

export type Account = z.infer<typeof accountSchema>;
export type ActingTeam = z.infer<typeof actingTeamSchema>;
export type ServerSummary = z.infer<typeof serverSummarySchema>;
export type ServerDetail = z.infer<typeof serverDetailSchema>;
export type ScoreComponents = z.infer<typeof scoreComponentsSchema>;
export type BenchmarkRun = z.infer<typeof benchmarkRunSchema>;

/** The v1 success bodies: `{data: …}` around each resource. OpenAPI and response serialization both derive from these. */
export const v1Responses = {
  me: z.object({ data: accountSchema }),
  servers: z.object({ data: z.object({ servers: z.array(serverSummarySchema) }) }),
  server: z.object({ data: serverDetailSchema }),
  benchmarks: z.object({ data: z.object({ benchmarks: z.array(benchmarkRunSchema) }) }),
};

/** JSON Schema (draft 7) of a zod schema, for Fastify's serializer and for OpenAPI. */
export function jsonSchemaOf(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown>;
  return rest;
}
