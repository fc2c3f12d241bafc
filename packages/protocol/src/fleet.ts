import { z } from 'zod';
import { MAX_NOTE, MAX_TTL_S } from './control.js';
import { serverTagsInput } from './server-tags.js';
import { plainText } from './text.js';

/**
 * Fleet-wide protection (docs/protection.md, "Fleet policies"): an account's policies ("when one
 * server bans an address, ban it on these servers too"), its fleet blacklist and whitelist, and the
 * state of each entry on each server it applies to.
 */
// ---- what a fleet may hold (docs/protection.md, "What a fleet may hold") ----

/** Reported bans are propagated for at most this long (a longer or missing ttl is clamped to it). */
export const REPORTED_BAN_MAX_TTL_S = Math.min(30 * 86_400, MAX_TTL_S);
/** Reported bans per server per minute that the console considers; the rest are dropped and counted. */
export const REPORTED_BANS_PER_MINUTE = 60;
/** The widest range a reported ban may be: what the agent's detection itself makes. */
export const REPORTED_MIN_PREFIX = { 4: 24, 6: 64 } as const;
/** The widest manual fleet entry without `confirm_wide: true`. */
export const MANUAL_MIN_PREFIX = { 4: 8, 6: 32 } as const;

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
    name: plainText(z.string().trim().min(1, 'expected 1 to 100 characters').max(100, 'expected 1 to 100 characters')),
    trigger: z.enum(FLEET_TRIGGERS, 'expected attack, pattern or any'),
    ...scopeFields,
    /** How long the other servers ban; null: as long as the first server's ban (both at most REPORTED_BAN_MAX_TTL_S). */
    duration_s: z
      .number()
      .int()
      .min(1)
      .max(REPORTED_BAN_MAX_TTL_S, `expected 1 to ${REPORTED_BAN_MAX_TTL_S} seconds (30 days)`)
      .nullable()
      .default(null),
    enabled: z.boolean('expected true or false').default(true),
    /** Reported bans of private addresses (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7) propagate too. */
    allow_private: z.boolean('expected true or false').default(false),
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
  allow_private: z.boolean(),
  created_at: z.number().int(),
  updated_at: z.number().int(),
});
export type FleetPolicy = z.infer<typeof fleetPolicySchema>;

export const fleetEntryInput = z
  .object({
    list: z.enum(FLEET_LISTS, 'expected black or white'),
    ip: z.string('expected an IP address or CIDR, e.g. 203.0.113.7 or 198.51.100.0/24').max(100),
    reason: plainText(z.string().trim().max(MAX_NOTE, `expected at most ${MAX_NOTE} characters`)).optional(),
    ttl_s: z.number().int().min(1).max(MAX_TTL_S).nullable().optional(),
    /** Needed for a range wider than MANUAL_MIN_PREFIX (/8 IPv4, /32 IPv6): the account means it. */
    confirm_wide: z.boolean('expected true or false').optional(),
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

/** `GET /api/fleet/entries`: one page, newest first (docs/api.md, "Lists that page"). */
export const fleetEntriesPageSchema = z.object({
  entries: z.array(fleetEntrySchema),
  next_cursor: z.string().nullable(),
  total: z.number().int().nonnegative(),
});

/**
 * A lift's answer (`DELETE /api/fleet/addresses?ip=`, `DELETE /api/fleet/entries/:id`): how many
 * entries were lifted, and every server that has not confirmed it dropped them yet (`pending`: not
 * reached yet, tried again; `failed`: the agent refused). `complete` is true when that list is empty.
 */
export const fleetLiftSchema = z.object({
  lifted: z.number().int().nonnegative(),
  complete: z.boolean(),
  still_held: z.array(
    z.object({
      entry_id: z.number().int(),
      address: z.string(),
      server_id: z.number().int(),
      server_name: z.string(),
      state: z.enum(['pending', 'failed']),
      reason: z.string().nullable(),
    }),
  ),
});
export type FleetLift = z.infer<typeof fleetLiftSchema>;

/** Why a reported ban was not propagated (docs/protection.md, "What a fleet may hold"). */
export const REFUSED_BAN_REASONS = [
  'invalid',
  'too_wide',
  'special_use',
  'private',
  'console_address',
  'control_characters',
  'rate',
] as const;
export type RefusedBanReason = (typeof REFUSED_BAN_REASONS)[number];
const refusedCounts = z.partialRecord(z.enum(REFUSED_BAN_REASONS), z.number().int().nonnegative());

/** What became of the bans one check-in reported: in the check-in's answer (`bans`). */
export const checkinBansOutcomeSchema = z.object({
  /** Bans considered for the fleet policies (within the rate). */
  accepted: z.number().int().nonnegative(),
  /** Bans dropped, by reason; absent reasons are 0. */
  refused: refusedCounts,
});
export type CheckinBansOutcome = z.infer<typeof checkinBansOutcomeSchema>;

/** `GET /api/fleet/servers/:id/bans`: the server's reported bans, the rate it is held to, and what was refused. */
export const fleetServerBansSchema = z.object({
  server_id: z.number().int(),
  limit_per_minute: z.number().int(),
  window_started_at: z.number().int().nullable(),
  accepted_in_window: z.number().int().nonnegative(),
  refused_total: z.number().int().nonnegative(),
  refused: refusedCounts,
  last_refused_at: z.number().int().nullable(),
  last_refused: z.string().nullable(),
});
export type FleetServerBans = z.infer<typeof fleetServerBansSchema>;

/** `GET /api/fleet/addresses?ip=`: the entries holding the address, each with its state per server. */
export const fleetAddressSchema = z.object({
  ip: z.string(),
  entries: z.array(fleetEntrySchema.extend({ servers: z.array(fleetApplicationSchema) })),
});
export type FleetAddress = z.infer<typeof fleetAddressSchema>;
