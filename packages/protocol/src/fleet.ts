import { z } from 'zod';
import { MAX_NOTE, MAX_TTL_S } from './control.js';
import { serverTagsInput } from './server-tags.js';

/**
 * Fleet-wide protection (docs/protection.md, "Fleet policies"): an account's policies ("when one
 * server bans an address, ban it on these servers too"), its fleet blacklist and whitelist, and the
 * state of each entry on each server it applies to.
 */
export const FLEET_TRIGGERS = ['attack', 'pattern', 'any'] as const;
export type FleetTrigger = (typeof FLEET_TRIGGERS)[number];
export const FLEET_SCOPES = ['all', 'tags', 'product'] as const;
export type FleetScope = (typeof FLEET_SCOPES)[number];
export const FLEET_LISTS = ['black', 'white'] as const;
export type FleetList = (typeof FLEET_LISTS)[number];
export const FLEET_STATES = ['pending', 'applied', 'failed'] as const;
export type FleetState = (typeof FLEET_STATES)[number];
/** The note a propagated entry carries on each agent starts with this and the entry's id. */
export const FLEET_NOTE_PREFIX = 'fleet:';

const scopeFields = {
  scope: z.enum(FLEET_SCOPES, 'expected all, tags or product'),
  tags: serverTagsInput.optional(),
  product_id: z.number().int().positive('expected a product id').optional(),
};

/** `tags` only with scope tags (at least one), `product_id` only with scope product. */
function checkScope(v: { scope: FleetScope; tags?: string[]; product_id?: number }, ctx: z.RefinementCtx) {
  if (v.scope === 'tags' && (v.tags?.length ?? 0) === 0)
    ctx.addIssue({ code: 'custom', path: ['tags'], message: 'expected at least one tag for scope tags' });
  if (v.scope !== 'tags' && v.tags !== undefined && v.tags.length > 0)
    ctx.addIssue({ code: 'custom', path: ['tags'], message: 'only with scope tags' });
  if (v.scope === 'product' && v.product_id === undefined)
    ctx.addIssue({ code: 'custom', path: ['product_id'], message: 'expected a product id for scope product' });
  if (v.scope !== 'product' && v.product_id !== undefined)
    ctx.addIssue({ code: 'custom', path: ['product_id'], message: 'only with scope product' });
}

export const fleetPolicyInput = z
  .object({
    name: z.string().trim().min(1, 'expected 1 to 100 characters').max(100, 'expected 1 to 100 characters'),
    trigger: z.enum(FLEET_TRIGGERS, 'expected attack, pattern or any'),
    ...scopeFields,
    /** How long the other servers ban; null: as long as the first server's ban. */
    duration_s: z.number().int().min(1).max(MAX_TTL_S).nullable().default(null),
    enabled: z.boolean('expected true or false').default(true),
  })
  .strict()
  .superRefine(checkScope);
export type FleetPolicyInput = z.infer<typeof fleetPolicyInput>;

export const fleetPolicySchema = z.object({
  id: z.number().int().positive(),
  name: z.string(),
  trigger: z.enum(FLEET_TRIGGERS),
  scope: z.enum(FLEET_SCOPES),
  tags: z.array(z.string()),
  product_id: z.number().int().nullable(),
  duration_s: z.number().int().nullable(),
  enabled: z.boolean(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export type FleetPolicy = z.infer<typeof fleetPolicySchema>;

export const fleetEntryInput = z
  .object({
    list: z.enum(FLEET_LISTS, 'expected black or white'),
    ip: z.string('expected an IP address or CIDR, e.g. 203.0.113.7 or 198.51.100.0/24').max(100),
    reason: z.string().trim().max(MAX_NOTE, `expected at most ${MAX_NOTE} characters`).optional(),
    ttl_s: z.number().int().min(1).max(MAX_TTL_S).nullable().optional(),
    ...scopeFields,
  })
  .strict()
  .superRefine(checkScope);
export type FleetEntryInput = z.infer<typeof fleetEntryInput>;

/** One entry's state on one server. */
export const fleetApplicationSchema = z.object({
  server_id: z.number().int(),
  server_name: z.string(),
  /** present: the server should hold the entry; absent: it should drop it (lifted, or out of scope). */
  want: z.enum(['present', 'absent']),
  state: z.enum(FLEET_STATES),
  /** Why it failed or is still pending (the agent's answer, or why it could not be reached). */
  reason: z.string().nullable(),
  attempts: z.number().int(),
  next_attempt_at: z.number().int().nullable(),
  applied_at: z.number().int().nullable(),
});
export type FleetApplication = z.infer<typeof fleetApplicationSchema>;

export const fleetEntrySchema = z.object({
  id: z.number().int().positive(),
  list: z.enum(FLEET_LISTS),
  address: z.string(),
  reason: z.string(),
  origin: z.object({
    kind: z.enum(['attack', 'pattern', 'manual']),
    server_id: z.number().int().nullable(),
    server_name: z.string().nullable(),
    /** The first server's attack (`log_pattern 12`) or pattern name. */
    event: z.string().nullable(),
  }),
  policy_id: z.number().int().nullable(),
  scope: z.enum(FLEET_SCOPES),
  tags: z.array(z.string()),
  product_id: z.number().int().nullable(),
  created_by: z.string(),
  created_at: z.number().int(),
  expires_at: z.number().int().nullable(),
  lifted_at: z.number().int().nullable(),
  counts: z.object({ applied: z.number().int(), pending: z.number().int(), failed: z.number().int() }),
});
export type FleetEntry = z.infer<typeof fleetEntrySchema>;

/** `GET /api/fleet/addresses?ip=`: the entries holding the address, each with its state per server. */
export const fleetAddressSchema = z.object({
  ip: z.string(),
  entries: z.array(fleetEntrySchema.extend({ servers: z.array(fleetApplicationSchema) })),
});
export type FleetAddress = z.infer<typeof fleetAddressSchema>;
