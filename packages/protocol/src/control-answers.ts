import * as z from 'zod/mini';
import { BACKENDS, ENTRY_SOURCES, GEO_MODES, HOLDER_KINDS, SCHEDULE_TASKS } from './control.js';

/**
 * What the agent's control paths answer (the table in control-schemas.ts says which path and
 * method gives which). Bundled with control-schemas.ts for the agent, so `zod/mini` here too.
 */

const stamp = z.number();
const maybeStamp = z.nullable(z.number());

export const listEntrySchema = z.object({
  ip: z.string(),
  note: z.optional(z.string()),
  ttl_s: z.optional(z.number()),
  source: z.enum(ENTRY_SOURCES),
  added_at: stamp,
  expires_at: z.optional(stamp),
});
export type ListEntry = z.infer<typeof listEntrySchema>;

export const listAnswer = z.object({ entries: z.array(listEntrySchema) });
export const importAnswer = z.object({
  added: z.number(),
  skipped: z.number(),
  invalid: z.number(),
  invalid_examples: z.optional(z.array(z.string())),
});
export type ImportAnswer = z.infer<typeof importAnswer>;
export const listAddAnswer = z.union([z.object({ added: z.boolean(), entry: listEntrySchema }), importAnswer]);
export const removedAnswer = z.object({ removed: z.string() });
export const clearedAnswer = z.object({ removed: z.number() });

export const geoAnswer = z.object({
  mode: z.enum(GEO_MODES),
  countries: z.array(z.string()),
  loading: z.boolean(),
  ranges: z.number(),
  error: z.nullable(z.string()),
});
export type GeoAnswer = z.infer<typeof geoAnswer>;

export const baselineImportAnswer = z.object({ imported: z.literal(true), interfaces: z.number() });
export const baselineDeleteAnswer = z.object({ deleted: z.literal(true) });

export const feedSchema = z.object({
  name: z.string(),
  url: z.string(),
  enabled: z.boolean(),
  entries: z.number(),
  invalid: z.number(),
  last_fetch_at: maybeStamp,
  last_ok_at: maybeStamp,
  last_error: z.nullable(z.string()),
});
export const autofetchAnswer = z.object({ enabled: z.boolean(), feeds: z.array(feedSchema) });
export type AutofetchAnswer = z.infer<typeof autofetchAnswer>;

export const scheduleEntrySchema = z.object({
  task: z.enum(SCHEDULE_TASKS),
  what: z.string(),
  cron: z.nullable(z.string()),
  next_run_at: maybeStamp,
  last_run_at: maybeStamp,
  last_error: z.nullable(z.string()),
});
export const scheduleAnswer = z.object({ schedule: z.array(scheduleEntrySchema) });
export type ScheduleEntry = z.infer<typeof scheduleEntrySchema>;

export const blockPatternSchema = z.object({
  name: z.string(),
  file: z.string(),
  regex: z.string(),
  threshold: z.number(),
  window_s: z.number(),
  ban_s: z.number(),
  source: z.optional(z.enum(['auto', 'file', 'journal'])),
  journal: z.optional(z.array(z.string())),
});
export type BlockPattern = z.infer<typeof blockPatternSchema>;
export const patternStateSchema = z.extend(blockPatternSchema, {
  matches: z.number(),
  bans: z.number(),
  file_error: z.nullable(z.string()),
  /** What the pattern reads on this host: a file path, or `journal: sshd, ssh.service`; `source: auto` resolved. */
  reads: z.optional(z.string()),
  /** Why that source cannot be read (missing, permissions, no journal), or null. */
  source_error: z.optional(z.nullable(z.string())),
});
export const shippedPatternSchema = z.extend(z.omit(blockPatternSchema, { regex: true }), {
  description: z.string(),
  /** What shows the pattern's service is on this host (`/usr/sbin/sshd`), or null; absent from older agents. */
  found: z.optional(z.nullable(z.string())),
});
/** A service the shipped patterns protect: found on this host (by which path) and whether all its patterns are enabled. */
export const protectedServiceSchema = z.object({
  service: z.string(),
  patterns: z.array(z.string()),
  found: z.nullable(z.string()),
  enabled: z.boolean(),
});
export type ProtectedServiceState = z.infer<typeof protectedServiceSchema>;
export const patternsAnswer = z.object({
  patterns: z.array(patternStateSchema),
  shipped: z.array(shippedPatternSchema),
  /** Every service of PROTECTED_SERVICES (control.ts); absent from older agents. */
  services: z.optional(z.array(protectedServiceSchema)),
});
export type PatternsAnswer = z.infer<typeof patternsAnswer>;
export const patternAddAnswer = z.object({ added: z.boolean(), pattern: blockPatternSchema });

export const attackSchema = z.looseObject({
  id: z.string(),
  kind: z.string(),
  started_at: stamp,
  ended_at: maybeStamp,
  peak_pps: z.number(),
  peak_bps: z.number(),
  sources: z.array(z.object({ ip: z.string(), hits: z.number() })),
  action: z.string(),
  target: z.optional(z.string()),
});
export type Attack = z.infer<typeof attackSchema>;
export const attacksAnswer = z.object({ attacks: z.array(attackSchema), active: z.number(), total: z.number() });

export const blacklistJobSchema = z.object({
  state: z.enum(['idle', 'running', 'done', 'failed']),
  attack_id: z.nullable(z.string()),
  total: z.number(),
  done: z.number(),
  added: z.number(),
  skipped: z.number(),
  started_at: maybeStamp,
  finished_at: maybeStamp,
  error: z.nullable(z.string()),
});
export type BlacklistJob = z.infer<typeof blacklistJobSchema>;
export const blacklistStartAnswer = z.extend(blacklistJobSchema, { started: z.literal(true) });

/** The firewall backend running now: nftables blocks, monitor-only detects and lists but blocks nothing. */
export const enforcementSchema = z.object({ backend: z.enum(BACKENDS), reason: z.nullable(z.string()) });
export type Enforcement = z.infer<typeof enforcementSchema>;

export const configAnswer = z.object({
  file: z.string(),
  values: z.record(z.string(), z.string()),
  protection: z.record(z.string(), z.unknown()),
  autofetch: autofetchAnswer,
  geo: geoAnswer,
  /** Absent from agents older than the lookup (docs/protection.md). */
  enforcement: z.optional(enforcementSchema),
});
export type ConfigAnswer = z.infer<typeof configAnswer>;
export const configChangeAnswer = z.object({ changed: z.array(z.string()), reloaded: z.literal(true) });

/** One thing that holds an address in `GET blacklist?ip=`, and what it does to the address. */
export const holderSchema = z.object({
  kind: z.enum(HOLDER_KINDS),
  /** The entry, feed line or country range holding the address; null for the geo allow rule (no range). */
  range: z.nullable(z.string()),
  /** List entries (whitelist, blacklist, never-add, never-remove): the entry with its source and note. */
  entry: z.optional(listEntrySchema),
  feed: z.optional(z.string()),
  country: z.optional(z.string()),
  /** What it does to a new connection from the address now: accept, drop, or nothing (a later or switched-off rule). */
  effect: z.enum(['accept', 'drop', 'none']),
  detail: z.string(),
});
export type Holder = z.infer<typeof holderSchema>;

/** `GET blacklist?ip=<address>`: every source holding the address and what the firewall does with it. */
export const lookupAnswer = z.object({
  ip: z.string(),
  /** What the firewall does to a new connection from the address (monitor-only: would do). */
  verdict: z.enum(['accept', 'drop']),
  /** The holder whose rule decides, first in the firewall's order; null when no rule matches. */
  decided_by: z.nullable(z.enum(HOLDER_KINDS)),
  enforcement: enforcementSchema,
  /** On the whitelist and held by something that blocks: the whitelist wins. */
  on_both_lists: z.boolean(),
  summary: z.string(),
  holders: z.array(holderSchema),
});
export type LookupAnswer = z.infer<typeof lookupAnswer>;

/** `GET blacklist?source=feed:<name>`: one page of a feed's entries, in address order. */
export const feedPageAnswer = z.object({
  feed: z.string(),
  enabled: z.boolean(),
  total: z.number(),
  entries: z.array(z.string()),
  /** Pass as `cursor` for the next page; null on the last one. */
  next_cursor: z.nullable(z.string()),
});
export type FeedPageAnswer = z.infer<typeof feedPageAnswer>;
