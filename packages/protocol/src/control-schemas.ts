import * as z from 'zod/mini';
import {
  BASELINE_SLOTS,
  CLEARABLE_SOURCES,
  CONTROL_PATHS,
  type ControlPath,
  FEED_NAME,
  FEED_PAGE_MAX,
  GEO_MODES,
  MAX_NOTE,
  MAX_REGEX,
  MAX_TTL_S,
  PATTERN_NAME,
  SCHEDULE_TASKS,
} from './control.js';
import {
  attacksAnswer,
  autofetchAnswer,
  baselineDeleteAnswer,
  baselineImportAnswer,
  blacklistJobSchema,
  blacklistStartAnswer,
  clearedAnswer,
  configAnswer,
  configChangeAnswer,
  feedPageAnswer,
  geoAnswer,
  importAnswer,
  listAddAnswer,
  listAnswer,
  lookupAnswer,
  patternAddAnswer,
  patternsAnswer,
  removedAnswer,
  scheduleAnswer,
} from './control-answers.js';

/**
 * The agent's control API (docs/protection.md): for each of the 20 paths and each method, the body
 * it takes and the answer it gives. The agent checks every body with these before a feature sees
 * it, the dashboard reads answers with them, and the console's OpenAPI document is made from them.
 *
 * Written with `zod/mini` so the agent can load a bundled copy of this file alone
 * (`@palisade/protocol/control-schemas/standalone`, made by scripts/bundle-protocol.mjs): a few
 * hundred kilobytes of memory, where the whole of zod would cost the agent about 12 MB.
 * What needs the agent's own knowledge (is this a valid address, a known feed, a safe regex)
 * is checked by the agent after the shape.
 */

const whole = (name: string, min: number, max: number) => {
  const error = `${name}: expected a whole number from ${min} to ${max}`;
  return z.int({ error }).check(z.gte(min, { error }), z.lte(max, { error }));
};
const text = (error: string) => z.string({ error });
const _stamp = z.number();
const _maybeStamp = z.nullable(z.number());

// ---- bodies ----

/** One list entry: `{ip, note?, ttl_s?}`; `ip` is parsed by the agent (docs/protection.md, "Addresses"). */
export const listEntryInput = z.object(
  {
    ip: text('ip: expected an IP address or CIDR, e.g. 203.0.113.7 or 198.51.100.0/24'),
    note: z.optional(
      z.nullable(
        z
          .string({ error: `note: expected text of at most ${MAX_NOTE} characters` })
          .check(z.maxLength(MAX_NOTE, { error: `note: expected text of at most ${MAX_NOTE} characters` })),
      ),
    ),
    ttl_s: z.optional(z.nullable(whole('ttl_s', 1, MAX_TTL_S))),
  },
  { error: 'body: expected {ip, note?, ttl_s?} or a JSON array of entries' },
);
export type ListEntryInput = z.infer<typeof listEntryInput>;

/** An import: a JSON array of entries (`"ip"` or `{ip, note?, ttl_s?}`), `{entries: […]}`, or text with one entry per line. */
export const listImportBody = z.union(
  [
    z.array(z.unknown()),
    z.object({ entries: z.array(z.unknown(), { error: 'entries: expected a JSON array of entries' }) }),
    z.string(),
  ],
  { error: 'body: expected a JSON array of entries or one IP or CIDR per line' },
);
export type ListImportBody = z.infer<typeof listImportBody>;

/** `POST` on a list: one entry, or (an array or text) an import. */
export const listAddBody = z.union([z.array(z.unknown()), z.string(), listEntryInput], {
  error: 'body: expected {ip, note?, ttl_s?} or a JSON array of entries',
});

/** `DELETE` on a list: the `ip` query parameter or `{ip}`. */
export const listRemoveBody = z.object(
  { ip: text('ip: expected the IP address or CIDR to remove, as ?ip= or {"ip": …}') },
  { error: 'ip: expected the IP address or CIDR to remove, as ?ip= or {"ip": …}' },
);

/** `POST …/clear`: the `source` query parameter, when given, clears only that source's entries. */
export const listClearBody = z.object({
  source: z.optional(z.enum(CLEARABLE_SOURCES, { error: 'source: expected manual, attack, feed or import' })),
});

const feedSource = `source: expected feed:<name>, a feed named in autofetch.feeds, e.g. feed:firehol_level1`;
const pageLimit = `limit: expected a whole number from 1 to ${FEED_PAGE_MAX}`;
const cursorText = 'cursor: expected the next_cursor of the previous page';

/**
 * `GET blacklist`'s query parameters (docs/protection.md, "Why is this address blocked?"): `ip` asks
 * which sources hold one address; `source=feed:<name>` pages through a feed (`cursor`, `limit`).
 * Without any, the answer is the plain list. The agent parses the address and knows the feeds.
 */
export const blacklistReadQuery = z
  .object({
    ip: z.optional(
      z
        .string({ error: 'ip: expected one IP address, e.g. 203.0.113.7' })
        .check(z.maxLength(100, { error: 'ip: expected one IP address, e.g. 203.0.113.7' })),
    ),
    source: z.optional(
      z
        .string({ error: feedSource })
        .check(z.refine((v) => v.startsWith('feed:') && FEED_NAME.test(v.slice(5)), { error: feedSource })),
    ),
    cursor: z.optional(
      z
        .string({ error: cursorText })
        .check(z.minLength(1, { error: cursorText }), z.maxLength(100, { error: cursorText })),
    ),
    limit: z.optional(
      z
        .string({ error: pageLimit })
        .check(z.refine((v) => /^[1-9]\d{0,6}$/.test(v) && Number(v) <= FEED_PAGE_MAX, { error: pageLimit })),
    ),
  })
  .check(
    z.refine((q) => !(q.ip !== undefined && q.source !== undefined), {
      error: 'ip: give either ?ip= or ?source=feed:<name>, not both',
    }),
    z.refine((q) => q.source !== undefined || (q.cursor === undefined && q.limit === undefined), {
      error: 'cursor: cursor and limit page through ?source=feed:<name> only',
    }),
  );
export type BlacklistReadQuery = z.infer<typeof blacklistReadQuery>;

const country = z
  .string({ error: 'country: expected a two-letter ISO 3166 country code, e.g. DE' })
  .check(z.regex(/^\s*[A-Za-z]{2}\s*$/, { error: 'country: expected a two-letter ISO 3166 country code, e.g. DE' }));

const objectError = (shape: string) => ({ error: `body: expected a JSON object ${shape}` });

export const geoModeBody = z.object(
  {
    mode: z.optional(z.enum(GEO_MODES, { error: 'mode: expected off, allow or deny' })),
    countries: z.optional(z.array(country, { error: 'countries: expected a list of two-letter country codes' })),
  },
  objectError('{mode?, countries?}'),
);
export type GeoModeBody = z.infer<typeof geoModeBody>;

export const geoToggleBody = z.object({ country }, objectError('{country}'));

const rateSlots = (name: string) =>
  z
    .array(z.array(z.number().check(z.gte(0)), { error: `${name}: expected a list of rates` }), {
      error: `${name}: expected ${BASELINE_SLOTS} hour-of-week slots`,
    })
    .check(z.length(BASELINE_SLOTS, { error: `${name}: expected ${BASELINE_SLOTS} hour-of-week slots` }));

/** A traffic baseline as `baseline/export` gives it; `baseline/import` takes the same. */
export const baselineSchema = z.object(
  {
    version: z.literal(1, { error: 'version: expected 1 (a baseline made by baseline/export)' }),
    slot_samples: z.optional(z.number()),
    interfaces: z.record(
      z.string().check(z.regex(/^[\w.:@-]{1,32}$/, { error: 'interfaces: expected interface names as keys' })),
      z.object({ pps: rateSlots('pps'), bps: rateSlots('bps') }),
      { error: 'interfaces: expected {name: {pps, bps}} as made by baseline/export' },
    ),
  },
  { error: 'body: expected {version: 1, interfaces: {…}} as made by baseline/export' },
);
export type Baseline = z.infer<typeof baselineSchema>;

export const autofetchToggleBody = z.object(
  {
    enabled: z.optional(z.boolean({ error: 'enabled: expected true or false' })),
    feed: z.optional(text('feed: expected the name of a feed')),
  },
  objectError('{enabled?, feed?}'),
);
export type AutofetchToggleBody = z.infer<typeof autofetchToggleBody>;

export const fetchNowBody = z.object(
  { feed: z.optional(text('feed: expected the name of a feed')) },
  objectError('{feed?}'),
);

const task = z.enum(SCHEDULE_TASKS, { error: `task: expected one of ${SCHEDULE_TASKS.join(', ')}` });

/** `POST schedule`: a task's cron expression; null or "" turns the task off. */
export const scheduleBody = z.object(
  {
    task,
    cron: z.optional(z.nullable(text('cron: expected a cron expression such as "0 3 * * *"'))),
  },
  objectError('{task, cron}'),
);
export type ScheduleBody = z.infer<typeof scheduleBody>;

/** `DELETE schedule`: the `task` query parameter or `{task}`. */
export const scheduleRemoveBody = z.object({ task }, objectError('{task}'));

/** `POST block-pattern`: a shipped pattern's name fills in every field not given (docs/protection.md). */
/** Where a log pattern reads: a file, the systemd journal, or whichever of those the host has (docs/protection.md). */
export const PATTERN_SOURCES = ['auto', 'file', 'journal'] as const;
/** A syslog identifier (`sshd`, `postfix/smtpd`) or a unit name (`ssh.service`) in the journal. */
export const JOURNAL_NAME = /^[A-Za-z0-9][A-Za-z0-9@._:/-]{0,63}$/;
/** The agent's words for a bad `journal` and `source`; the dashboard's pattern form says the same. */
export const JOURNAL_ERROR =
  'journal: expected 1 to 8 syslog identifiers or unit names (letters, digits, "@", ".", "_", ":", "/", "-"), e.g. ["sshd", "ssh.service"]';
export const JOURNAL_REQUIRED =
  'journal: expected the syslog identifiers or units to read, e.g. ["sshd", "ssh.service"]';
export const SOURCE_ERROR = 'source: expected "auto", "file" or "journal"';

export const blockPatternBody = z.object(
  {
    name: z
      .string({ error: 'name: expected 1 to 64 letters, digits, ".", "_" or "-"' })
      .check(z.regex(PATTERN_NAME, { error: 'name: expected 1 to 64 letters, digits, ".", "_" or "-"' })),
    file: z.optional(
      z.string({ error: 'file: expected an absolute path to a log file' }).check(
        z.refine((f) => f.startsWith('/') && f.length <= 500 && !f.includes('\0'), {
          error: 'file: expected an absolute path to a log file',
        }),
      ),
    ),
    regex: z.optional(
      z
        .string({ error: `regex: expected a regular expression of at most ${MAX_REGEX} characters` })
        .check(
          z.minLength(1, { error: `regex: expected a regular expression of at most ${MAX_REGEX} characters` }),
          z.maxLength(MAX_REGEX, { error: `regex: expected a regular expression of at most ${MAX_REGEX} characters` }),
        ),
    ),
    threshold: z.optional(whole('threshold', 1, 100_000)),
    window_s: z.optional(whole('window_s', 1, 86_400)),
    ban_s: z.optional(whole('ban_s', 1, MAX_TTL_S)),
    source: z.optional(z.enum(PATTERN_SOURCES, { error: SOURCE_ERROR })),
    journal: z.optional(
      z
        .array(z.string({ error: JOURNAL_ERROR }).check(z.regex(JOURNAL_NAME, { error: JOURNAL_ERROR })), {
          error: JOURNAL_ERROR,
        })
        .check(z.minLength(1, { error: JOURNAL_ERROR }), z.maxLength(8, { error: JOURNAL_ERROR })),
    ),
  },
  objectError('{name, file, regex, threshold, window_s, ban_s, source, journal}'),
);
export type BlockPatternBody = z.infer<typeof blockPatternBody>;

/** `DELETE block-pattern`: the `name` query parameter or `{name}`. */
export const blockPatternRemoveBody = z.object(
  { name: text('name: expected the name of a block pattern') },
  objectError('{name}'),
);

export const attackBlacklistBody = z.object(
  {
    attack_id: z.union([z.string(), z.number()], { error: 'attack_id: expected the id of an attack' }),
  },
  objectError('{attack_id}'),
);

const configValue = z.union([z.string(), z.number(), z.boolean()]);
/** `POST config`: `{ "dotted.key": value | [values] | null }`; the agent checks each key against its config file's rules. */
export const configChangeBody = z
  .record(
    z.string(),
    z.nullable(
      z.union([configValue, z.array(configValue)], { error: 'expected a string, number, boolean, list or null' }),
    ),
    { error: 'body: expected a JSON object of config keys, e.g. {"protection.conn_limit": 200}' },
  )
  .check(z.refine((o) => Object.keys(o).length > 0, { error: 'body: no config keys given' }));
export type ConfigChangeBody = z.infer<typeof configChangeBody>;

// ---- the table ----

export type ControlMethod = 'GET' | 'POST' | 'DELETE';

export interface ControlOperation {
  summary: string;
  /** What the body must be; absent: none is read. Query parameters named in `query` are merged into it. */
  body?: z.ZodMiniType;
  /**
   * Query parameters that stand in for body fields (`DELETE whitelist?ip=…`); on a GET, the only
   * input there is (`GET blacklist?ip=…`). The console's proxy forwards these and no others.
   */
  query?: readonly string[];
  answer: z.ZodMiniType;
  /** GET: the answer when this query parameter is given, in place of `answer` (`GET blacklist?ip=`). */
  answers?: Readonly<Record<string, z.ZodMiniType>>;
}

const list = (name: string) =>
  ({
    GET: { summary: `The ${name} entries`, answer: listAnswer },
    POST: {
      summary: `Adds one entry to the ${name} (an array or text imports many)`,
      body: listAddBody,
      answer: listAddAnswer,
    },
    DELETE: {
      summary: `Removes one entry from the ${name}`,
      body: listRemoveBody,
      query: ['ip'],
      answer: removedAnswer,
    },
  }) as const;
const clear = (name: string) =>
  ({
    POST: {
      summary: `Empties the ${name} (or only the entries of ?source=)`,
      body: listClearBody,
      query: ['source'],
      answer: clearedAnswer,
    },
  }) as const;
const geoRead = { summary: 'The geo mode, countries and ranges loaded', answer: geoAnswer };
const feedsRead = { summary: 'The blocklist feeds and their last fetch', answer: autofetchAnswer };
const jobRead = { summary: 'The progress of the last attack blacklisting', answer: blacklistJobSchema };

/** Every control path with its methods. A method not listed answers 405. */
export const CONTROL_OPERATIONS = {
  config: {
    GET: { summary: "The agent's config file values (secrets masked) and protection state", answer: configAnswer },
    POST: {
      summary: 'Changes config keys, writes the file and reloads',
      body: configChangeBody,
      answer: configChangeAnswer,
    },
  },
  whitelist: list('whitelist'),
  'whitelist/clear': clear('whitelist'),
  'whitelist/import': {
    POST: { summary: 'Imports many whitelist entries', body: listImportBody, answer: importAnswer },
  },
  blacklist: {
    ...list('blacklist'),
    GET: {
      summary:
        'The blacklist entries; with ?ip= every source holding that address, with ?source=feed:<name> a page of that feed',
      body: blacklistReadQuery,
      query: ['ip', 'source', 'cursor', 'limit'],
      answer: listAnswer,
      answers: { ip: lookupAnswer, source: feedPageAnswer },
    },
  },
  'blacklist/clear': clear('blacklist'),
  'geo/mode': {
    GET: geoRead,
    POST: { summary: 'Sets the geo mode and countries', body: geoModeBody, answer: geoAnswer },
  },
  'geo/toggle': {
    GET: geoRead,
    POST: { summary: 'Adds or removes one country', body: geoToggleBody, answer: geoAnswer },
  },
  'baseline/export': { GET: { summary: 'The learned traffic baseline', answer: baselineSchema } },
  'baseline/import': {
    POST: {
      summary: 'Replaces the traffic baseline with an exported one',
      body: baselineSchema,
      answer: baselineImportAnswer,
    },
  },
  'baseline/delete': {
    POST: { summary: 'Forgets the traffic baseline', answer: baselineDeleteAnswer },
    DELETE: { summary: 'Forgets the traffic baseline', answer: baselineDeleteAnswer },
  },
  'autofetch/toggle': {
    GET: feedsRead,
    POST: {
      summary: 'Turns feeds on or off (all, or one by name)',
      body: autofetchToggleBody,
      answer: autofetchAnswer,
    },
  },
  'autofetch/never-add': list('never-add list'),
  'autofetch/never-remove': list('never-remove list'),
  'autofetch/fetch-now': {
    GET: feedsRead,
    POST: { summary: 'Fetches the enabled feeds (or one) now', body: fetchNowBody, answer: autofetchAnswer },
  },
  schedule: {
    GET: { summary: 'The maintenance tasks and when they run', answer: scheduleAnswer },
    POST: { summary: "Sets a task's cron expression (null: never)", body: scheduleBody, answer: scheduleAnswer },
    DELETE: {
      summary: "Turns a task's schedule off",
      body: scheduleRemoveBody,
      query: ['task'],
      answer: scheduleAnswer,
    },
  },
  'block-pattern': {
    GET: { summary: 'The log patterns watched and the shipped ones', answer: patternsAnswer },
    POST: { summary: 'Adds or replaces a log pattern', body: blockPatternBody, answer: patternAddAnswer },
    DELETE: { summary: 'Removes a log pattern', body: blockPatternRemoveBody, query: ['name'], answer: removedAnswer },
  },
  attacks: { GET: { summary: 'Attacks seen, newest first', answer: attacksAnswer } },
  'attacks/blacklist': {
    GET: jobRead,
    POST: {
      summary: "Starts blacklisting an attack's sources",
      body: attackBlacklistBody,
      answer: blacklistStartAnswer,
    },
  },
  'attacks/blacklist/status': { GET: jobRead },
} as const satisfies Record<ControlPath, Partial<Record<ControlMethod, ControlOperation>>>;

export type ControlOperations = typeof CONTROL_OPERATIONS;

/** The operation of a path and method, or null (405). */
export function controlOperation(path: ControlPath, method: string): ControlOperation | null {
  const ops: Partial<Record<string, ControlOperation>> = CONTROL_OPERATIONS[path];
  return ops[method] ?? null;
}

/**
 * The schema an answer must fit, by the query parameters given (`has`): `GET blacklist?ip=` answers
 * a lookup, `?source=` a feed page, and without them the plain list.
 */
export function answerSchema(op: ControlOperation, has: (param: string) => boolean): z.ZodMiniType {
  for (const [param, schema] of Object.entries(op.answers ?? {})) if (has(param)) return schema;
  return op.answer;
}

/** The output type of a path and method's `body` or `answer` schema; `Else` when it has none. */
type Part<
  P extends ControlPath,
  M extends keyof ControlOperations[P],
  K extends 'body' | 'answer',
  Else,
> = ControlOperations[P][M] extends { [k in K]: infer S extends z.ZodMiniType } ? z.output<S> : Else;

/** The checked body a path and method's handler receives (undefined when it reads none). */
export type ControlInput<P extends ControlPath, M extends keyof ControlOperations[P]> = Part<P, M, 'body', undefined>;

/** The answer a path and method give, typed. */
export type ControlOutput<P extends ControlPath, M extends keyof ControlOperations[P]> = Part<P, M, 'answer', never>;

/** The answer a GET of `path` gives, typed. */
export type ControlAnswer<P extends ControlPath> = ControlOperations[P] extends { GET: { answer: infer S } }
  ? S extends z.ZodMiniType
    ? z.infer<S>
    : never
  : never;

/** One problem of a failed check, as the 400 sentence: the field, then what was expected. */
export function problemOf(error: { issues: readonly z.core.$ZodIssue[] }): string {
  let issue: z.core.$ZodIssue | undefined = error.issues[0];
  if (!issue) return 'body: not understood';
  // A union none of whose shapes fit: when one shape fit at the top and failed on a field, that
  // field is the problem (`{ip: 5}` is an entry with a bad ip, not "neither an array nor text").
  while (issue.code === 'invalid_union') {
    const options: z.core.$ZodIssue[][] = issue.errors;
    const inner: z.core.$ZodIssue | undefined = options.find((o) => o[0] && o[0].path.length > 0)?.[0];
    if (!inner) break;
    issue = { ...inner, path: [...issue.path, ...inner.path] };
  }
  const field = issue.path
    .map((p, i) => (typeof p === 'number' ? `[${p}]` : `${i === 0 ? '' : '.'}${String(p)}`))
    .join('');
  // The messages above start with their field's name; the issue's path names it in full.
  const own = /^[\w.[\]-]+: /.exec(issue.message);
  const rest = own ? issue.message.slice(own[0].length) : issue.message;
  return `${field || (own ? own[0].slice(0, -2) : 'body')}: ${rest}`;
}

/** Checks `value` against `schema`: the value typed, or the 400 sentence. */
export function checkControl<S extends z.ZodMiniType>(
  schema: S,
  value: unknown,
): { ok: true; value: z.infer<S> } | { ok: false; problem: string } {
  const parsed = schema.safeParse(value);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, problem: problemOf(parsed.error) };
}

export {
  BACKENDS,
  BASELINE_SLOTS,
  CLEARABLE_SOURCES,
  ENTRY_SOURCES,
  type EntrySource,
  FEED_PAGE_DEFAULT,
  FEED_PAGE_MAX,
  GEO_MODES,
  type GeoMode,
  HOLDER_KINDS,
  type HolderKind,
  MAX_NOTE,
  MAX_REGEX,
  MAX_TTL_S,
  NFT_MAX_TIMEOUT_S,
  PATTERN_NAME,
  PROTECTED_SERVICES,
  type ProtectedService,
  SCHEDULE_TASKS,
  type ScheduleTask,
} from './control.js';
export * from './control-answers.js';
export { CONTROL_PATHS };
