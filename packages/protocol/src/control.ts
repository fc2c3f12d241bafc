/**
 * The agent's 20 control paths: the only values the console's control proxy forwards (docs/fleet.md,
 * "Proxies"), the agent's control routes, and the SDK's control calls. No dependencies, so the agent
 * and the SDK can import it without loading zod.
 */
export const CONTROL_PATHS = [
  'config',
  'whitelist',
  'whitelist/clear',
  'whitelist/import',
  'blacklist',
  'blacklist/clear',
  'geo/mode',
  'geo/toggle',
  'baseline/export',
  'baseline/import',
  'baseline/delete',
  'autofetch/toggle',
  'autofetch/never-add',
  'autofetch/never-remove',
  'autofetch/fetch-now',
  'schedule',
  'block-pattern',
  'attacks',
  'attacks/blacklist',
  'attacks/blacklist/status',
] as const;

export type ControlPath = (typeof CONTROL_PATHS)[number];

const known: ReadonlySet<string> = new Set(CONTROL_PATHS);

/** Exact match only: no case folding, trimming or slashes. */
export function isControlPath(value: string): value is ControlPath {
  return known.has(value);
}

// Limits and names the agent, the console and the dashboard share (control-schemas.ts uses them).

export const MAX_NOTE = 200;
/**
 * The longest ban or entry lifetime anywhere (control API, fleet entries, policy durations, block
 * patterns' `ban_s`): three years. nftables (1.0.6) refuses element timeouts above 99,999,999 s
 * ("value too large"), and one refused element used to fail the whole firewall update
 * (docs/security.md, "The agent's Unix user and the firewall").
 */
export const MAX_TTL_S = 3 * 365 * 86400;
/** The largest element timeout nftables accepts, in seconds. */
export const NFT_MAX_TIMEOUT_S = 99_999_999;
export const MAX_REGEX = 2000;
export const BASELINE_SLOTS = 168;
export const PATTERN_NAME = /^[A-Za-z0-9_.-]{1,64}$/;
/**
 * Services the shipped log patterns protect, as `protection.protect` and the install script's
 * `--protect` name them (docs/protection.md, "Services found on the host").
 */
export const PROTECTED_SERVICES = ['sshd', 'nginx', 'apache', 'postfix', 'dovecot'] as const;
export type ProtectedService = (typeof PROTECTED_SERVICES)[number];
export const SCHEDULE_TASKS = ['autofetch', 'baseline-save', 'attack-bans-clear'] as const;
export type ScheduleTask = (typeof SCHEDULE_TASKS)[number];
export const ENTRY_SOURCES = ['manual', 'attack', 'pattern', 'feed', 'import'] as const;
export type EntrySource = (typeof ENTRY_SOURCES)[number];
/** The sources `…/clear?source=` accepts. */
export const CLEARABLE_SOURCES = ['manual', 'attack', 'feed', 'import'] as const;
export const GEO_MODES = ['off', 'allow', 'deny'] as const;
export type GeoMode = (typeof GEO_MODES)[number];

/** `GET blacklist?source=feed:<name>`: entries per page by default, and at most. */
export const FEED_PAGE_DEFAULT = 100;
export const FEED_PAGE_MAX = 1000;
/** Feed names as the agent's config accepts them (`autofetch.feeds = name=url, …`). */
export const FEED_NAME = /^[A-Za-z0-9_-]{1,40}$/;
/**
 * What can hold an address in `GET blacklist?ip=` (docs/protection.md, "Why is this address
 * blocked?"): the lists, the guard's own allowances, a feed and the geo rule.
 */
export const HOLDER_KINDS = [
  'loopback',
  'whitelist',
  'ssh_session',
  'console',
  'blacklist',
  'never-add',
  'never-remove',
  'feed',
  'geo',
] as const;
export type HolderKind = (typeof HOLDER_KINDS)[number];
export const BACKENDS = ['nftables', 'monitor'] as const;
