import { z } from 'zod';
import {
  AGENT_UPDATE_REPORT_STATES,
  ROLLOUT_STATES,
  UPDATE_HEALTH_TIMEOUT_MAX_S,
  UPDATE_HEALTH_TIMEOUT_MIN_S,
  UPDATE_SERVER_STATES,
  type UpdateOffer,
  type UpdateReport,
} from './agent-update.js';
import { TAG_EXPECTED, TAG_PATTERN } from './server-tags.js';

/** The console's checks of the agent-update shapes in agent-update.ts (docs/fleet.md, "Agent updates"). */
/** `POST /api/agent-updates`: start a rollout to the agent version this console serves. */
export const startRolloutRequest = z.object({
  /** Only servers with this tag; all the account's servers without it. */
  tag: z.string().regex(TAG_PATTERN, TAG_EXPECTED).nullable().optional(),
  /** Default `1,10%,100%`. */
  waves: z.string().max(100).optional(),
  health_timeout_s: z.number().int().min(UPDATE_HEALTH_TIMEOUT_MIN_S).max(UPDATE_HEALTH_TIMEOUT_MAX_S).optional(),
});
export type StartRolloutRequest = z.infer<typeof startRolloutRequest>;

const epochMs = z.number().int();

export const rolloutServerSchema = z.object({
  server_id: z.number().int().positive(),
  name: z.string(),
  /** 0-based wave. */
  wave: z.number().int().min(0),
  state: z.enum(UPDATE_SERVER_STATES),
  /** The version it ran when the rollout started. */
  from_version: z.string().nullable(),
  /** The version it last checked in with. */
  agent_version: z.string().nullable(),
  /** Why it was rolled back, failed or skipped; null otherwise. */
  reason: z.string().nullable(),
  updated_at: epochMs,
});
export type RolloutServer = z.infer<typeof rolloutServerSchema>;

export const rolloutSchema = z.object({
  id: z.number().int().positive(),
  version: z.string(),
  tag: z.string().nullable(),
  waves: z.string(),
  health_timeout_s: z.number().int(),
  state: z.enum(ROLLOUT_STATES),
  /** 0-based wave in progress (the last one once ended). */
  current_wave: z.number().int().min(0),
  wave_count: z.number().int().min(1),
  /** Why it failed or who cancelled it; null while running or completed. */
  reason: z.string().nullable(),
  /** Servers per state. */
  counts: z.record(z.enum(UPDATE_SERVER_STATES), z.number().int().min(0)),
  created_at: epochMs,
  finished_at: epochMs.nullable(),
});
export type Rollout = z.infer<typeof rolloutSchema>;

/** `GET /api/agent-updates/{id}`: the rollout and every server in it. */
export const rolloutDetailSchema = z.object({
  rollout: rolloutSchema,
  servers: z.array(rolloutServerSchema),
});

/** `GET /api/agent-updates`: the version served, what would be updated now, and the rollouts, newest first. */
export const rolloutListSchema = z.object({
  /** The agent version whose packages this console serves; null without packages. */
  served_version: z.string().nullable(),
  /** Whether the served release is signed (agents refuse an unsigned one). */
  signed: z.boolean(),
  /** Servers whose last check-in reported another version than `served_version`. */
  outdated: z.number().int().min(0),
  rollouts: z.array(rolloutSchema),
});

// --- The check-in -------------------------------------------------------------------------------

/** In the check-in answer: the update this agent should apply now. Paths are on the console's URL. */
export const updateOfferSchema = z.object({
  rollout_id: z.number().int().positive(),
  version: z.string().min(1).max(64),
  /** `/install/SHA256SUMS`. */
  sums_path: z.string(),
  /** `/install/SHA256SUMS.sig`. */
  signature_path: z.string(),
  /** `/install/palisade-agent-<v>-linux-x64` for an agent running as the single executable. */
  exe_path: z.string(),
  /** `/install/palisade-agent-<v>.mjs` for an agent running as the one-file bundle under Node. */
  mjs_path: z.string(),
  health_timeout_s: z.number().int().min(UPDATE_HEALTH_TIMEOUT_MIN_S).max(UPDATE_HEALTH_TIMEOUT_MAX_S),
}) satisfies z.ZodType<UpdateOffer>;

/** In the check-in request: where this agent is with a rollout. Sent until a check-in carrying it is answered 200. */
export const updateReportSchema = z.object({
  rollout_id: z.number().int().positive(),
  version: z.string().min(1).max(64),
  state: z.enum(AGENT_UPDATE_REPORT_STATES),
  /** Why, for `rolled_back` and `failed`: one line, at most 300 characters. */
  reason: z.string().max(300).nullable(),
}) satisfies z.ZodType<UpdateReport>;
