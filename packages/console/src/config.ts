import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import proxyAddr from '@fastify/proxy-addr';
import { LINK_HEARTBEAT_MIN_MS, LINK_HEARTBEAT_MS } from '@palisade/protocol/link';
import { z } from 'zod';
import { executableAsset, IN_EXECUTABLE } from './packaged.js';

/**
 * scrypt's cost for password hashes as log2 N (`PALISADE_PASSWORD_COST`, docs/console.md): 2^17 with
 * r=8 needs 128 MiB and about a third of a second of one core per hash. Lower is for test runs and
 * very small machines (the console warns at start); a hash made at a lower cost than the setting is
 * made again at the account's next sign-in.
 */
export const PASSWORD_COST_DEFAULT = 17;
export const PASSWORD_COST_MIN = 12;
export const PASSWORD_COST_MAX = 18;

/** The console's settings, read once from the environment at start and frozen. Nothing else reads `process.env`. */
export interface ConsoleConfig {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  /** PostgreSQL: run the hot statements as named prepared statements (db/prepared-statements.ts). */
  readonly databasePreparedStatements: boolean;
  readonly databaseSchema: string | null;
  readonly redisUrl: string | null;
  readonly redisPrefix: string;
  /** The SMTP server e-mail alert channels send through (docs/alerts.md); null: e-mail channels fail visibly. */
  readonly smtpUrl: string | null;
  /** The sender of alert e-mails (`PALISADE_SMTP_FROM`); null: `alerts@<SMTP host>`. Its domain names the Message-ID. */
  readonly smtpFrom: { name: string | null; address: string } | null;
  readonly publicUrl: string | null;
  readonly secretKey: Buffer | null;
  /**
   * The reverse proxies whose `X-Forwarded-*` headers are believed (`PALISADE_TRUST_PROXY`): `true`
   * for every peer, else their IPs/CIDRs (or proxy-addr's `loopback`, `linklocal`, `uniquelocal`);
   * empty: none. `proxyTrust()` turns it into the one function Fastify and the link endpoint both use.
   */
  readonly trustProxy: true | readonly string[];
  readonly allowPrivateTargets: boolean;
  readonly defaultPermissions: readonly Permission[];
  readonly logLevel: string;
  /** One info line per request (docs/deploy.md, "Logging"); off by default. */
  readonly accessLog: boolean;
  /** Serve the dashboard's source maps (`/assets/*.map`): off, so the bundle's sources are not public. */
  readonly webSourceMaps: boolean;
  /** Where Prometheus scrapes `/metrics` (docs/deploy.md, "Metrics"); null: no metrics listener. */
  readonly metricsAddr: { readonly host: string; readonly port: number } | null;
  /** Worker processes sharing the port (docs/deploy.md, "Workers"); more than 1 needs PostgreSQL. */
  readonly workers: number;
  readonly bootstrapAdmin: boolean;
  readonly checkinIntervalS: number;
  /** Seconds between alert evaluation rounds (docs/alerts.md, "Timing"). */
  readonly alertIntervalS: number;
  readonly agentTimeoutMs: number;
  /** The outbound links' heartbeat (docs/agent.md, "Outbound link"; packages/protocol/src/link.ts, linkTimers()). */
  readonly linkHeartbeatMs: number;
  /** Where `GET /install/…` finds the agent's artifacts (`npm run package` writes them). */
  readonly artifactsDir: string;
  readonly retention: { readonly rawHours: number; readonly fiveMinuteDays: number; readonly hourlyDays: number };
  /** Days the audit log keeps an entry (docs/protection.md, "Audit log"). */
  readonly auditRetentionDays: number;
  /** scrypt's cost for new password hashes, as log2 N (services/passwords.ts). */
  readonly passwordCost: number;
  /** Single sign-on with OpenID Connect (docs/teams.md, "Single sign-on"); null: off. */
  readonly oidc: OidcConfig | null;
}

/** One line of `PALISADE_OIDC_TEAM_MAP`: members of `group` get `role` in team `teamId`. */
export interface OidcTeamMapping {
  readonly group: string;
  readonly teamId: number;
  readonly role: TeamRole;
}

/** The console-wide OpenID provider (`PALISADE_OIDC_*`). The client secret is never logged. */
export interface OidcConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The sign-in button says "Sign in with <name>". */
  readonly name: string;
  /** E-mail domains allowed to sign in, lower case; empty: any verified address. */
  readonly allowedDomains: readonly string[];
  readonly groupsClaim: string;
  readonly teamMap: readonly OidcTeamMapping[];
  /** `PALISADE_PUBLIC_URL` + `/api/auth/oidc/callback`, as registered at the provider. */
  readonly redirectUri: string;
}

import { PERMISSIONS, type Permission, TEAM_ROLES, type TeamRole } from '@palisade/protocol';

export { PERMISSIONS, type Permission };

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`${variable}: ${message}`);
  }
}

const flag = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => ['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off', ''].includes(v), 'expected true or false')
  .transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

/**
 * `PALISADE_SMTP_FROM`: `alerts@example.com` or `Display Name <alerts@example.com>`: one address with
 * a domain, a name without quotes, angle brackets or control characters; null when it is not that.
 */
export function smtpFrom(value: string): { name: string | null; address: string } | null {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(value)) return null;
  const named = /^([^<>"@,;:\\]*?)\s*<([^<>\s]+)>$/.exec(value);
  const name = named ? named[1]!.trim() || null : null;
  const address = named ? named[2]! : value;
  if (
    !/^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$/.test(
      address,
    )
  )
    return null;
  return { name, address };
}

const fields = {
  PALISADE_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  PALISADE_HOST: z.string().trim().min(1).default('127.0.0.1'),
  PALISADE_DATA_DIR: z.string().trim().min(1).default('./data'),
  PALISADE_DATABASE_URL: z
    .string()
    .trim()
    .refine((v) => /^postgres(ql)?:\/\//.test(v), 'expected a postgres:// URL (leave it unset for SQLite)')
    .optional(),
  PALISADE_DATABASE_PREPARED_STATEMENTS: flag.default(false),
  PALISADE_DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'expected a lower-case SQL identifier')
    .optional(),
  PALISADE_REDIS_URL: z
    .string()
    .trim()
    .refine((v) => /^rediss?:\/\//.test(v), 'expected a redis:// URL')
    .optional(),
  PALISADE_SMTP_URL: z
    .string()
    .trim()
    .refine((v) => /^smtps?:\/\/[^/\s]+\/?$/.test(v), 'expected smtp://[user:password@]host:port or smtps://…')
    .optional(),
  PALISADE_SMTP_FROM: z
    .string()
    .trim()
    .max(254, 'at most 254 characters')
    .refine(
      (v) => smtpFrom(v) !== null,
      'expected an address such as alerts@example.com or "Palisade <alerts@example.com>" (one address, no line breaks or control characters)',
    )
    .optional(),
  PALISADE_REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_:.-]{1,64}$/, 'expected up to 64 letters, digits, _ : . or -')
    .default('palisade'),
  PALISADE_PUBLIC_URL: z
    .string()
    .trim()
    .refine((v) => /^https?:\/\/[^/]+\/?$/.test(v), 'expected an origin such as https://console.example.com')
    .optional(),
  PALISADE_SECRET_KEY: z
    .string()
    .trim()
    .refine(
      (v) => /^[0-9a-fA-F]{64}$/.test(v),
      'expected 64 hex characters (32 bytes); make one with `openssl rand -hex 32`',
    )
    .optional(),
  PALISADE_TRUST_PROXY: z
    .string()
    .transform((v, ctx) => {
      const parsed = trustProxy(v);
      if (typeof parsed === 'string') {
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      }
      return parsed;
    })
    .optional(),
  PALISADE_ALLOW_PRIVATE_TARGETS: flag.default(false),
  PALISADE_DEFAULT_PERMISSIONS: z
    .string()
    .trim()
    .refine(
      (v) => v === '' || v.split(',').every((p) => (PERMISSIONS as readonly string[]).includes(p.trim())),
      `expected a comma-separated list of ${PERMISSIONS.join(', ')} (or empty)`,
    )
    .optional(),
  PALISADE_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  PALISADE_BOOTSTRAP_ADMIN: flag.default(true),
  PALISADE_ACCESS_LOG: flag.default(false),
  PALISADE_WEB_SOURCE_MAPS: flag.default(false),
  PALISADE_METRICS_ADDR: z
    .string()
    .trim()
    .regex(/^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, 'expected host:port, such as 127.0.0.1:9464')
    .refine((v) => Number(v.slice(v.lastIndexOf(':') + 1)) <= 65535, 'expected a port up to 65535')
    .optional(),
  PALISADE_WORKERS: z.coerce.number().int().min(1).max(64).default(1),
  PALISADE_CHECKIN_INTERVAL_S: z.coerce.number().int().min(5).max(3600).default(30),
  PALISADE_ALERT_INTERVAL_S: z.coerce.number().int().min(1).max(600).default(15),
  PALISADE_AGENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  PALISADE_LINK_HEARTBEAT_MS: z.coerce
    .number()
    .int()
    .min(LINK_HEARTBEAT_MIN_MS)
    .max(LINK_HEARTBEAT_MS)
    .default(LINK_HEARTBEAT_MS),
  PALISADE_ARTIFACTS_DIR: z.string().trim().min(1).optional(),
  PALISADE_SAMPLES_RAW_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(24),
  PALISADE_SAMPLES_5M_DAYS: z.coerce.number().int().min(1).max(365).default(7),
  PALISADE_SAMPLES_1H_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
  PALISADE_AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3650).default(365),
  // http:// only on this machine (a provider for tests or development); anywhere else https://.
  PALISADE_OIDC_ISSUER: z
    .string()
    .trim()
    .refine(
      (v) =>
        /^https:\/\/[^/\s]+(\/\S*)?$/.test(v) || /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?(\/\S*)?$/.test(v),
      "expected the provider's issuer URL, such as https://auth.example.com/realms/ops (http:// only for localhost)",
    )
    .optional(),
  PALISADE_OIDC_CLIENT_ID: z.string().trim().min(1).max(500).optional(),
  PALISADE_OIDC_CLIENT_SECRET: z.string().trim().min(1).max(2000).optional(),
  PALISADE_OIDC_NAME: z.string().trim().min(1).max(60, 'at most 60 characters').default('single sign-on'),
  PALISADE_OIDC_ALLOWED_DOMAINS: z
    .string()
    .trim()
    .toLowerCase()
    .refine(
      (v) =>
        v === '' ||
        v
          .split(',')
          .every((d) =>
            /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+$/.test(d.trim()),
          ),
      'expected a comma-separated list of e-mail domains such as example.com,example.org (or empty for any)',
    )
    .optional(),
  PALISADE_OIDC_GROUPS_CLAIM: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9_:./-]{1,100}$/, 'expected a claim name such as groups')
    .default('groups'),
  PALISADE_OIDC_TEAM_MAP: z
    .string()
    .transform((v, ctx) => {
      const parsed = oidcTeamMap(v);
      if (typeof parsed === 'string') {
        ctx.addIssue({ code: 'custom', message: parsed });
        return z.NEVER;
      }
      return parsed;
    })
    .optional(),
  PALISADE_PASSWORD_COST: z.coerce
    .number()
    .int()
    .min(PASSWORD_COST_MIN)
    .max(PASSWORD_COST_MAX)
    .default(PASSWORD_COST_DEFAULT),
};

/**
 * `PALISADE_OIDC_TEAM_MAP`: `group=team id:role` entries separated by commas, such as
 * `ops-admins=7:admin,ops=7:operator`; a refusal names the entry and what was expected.
 */
export function oidcTeamMap(value: string): OidcTeamMapping[] | string {
  const expected = `expected group=team id:role entries separated by commas, such as ops-admins=7:admin,ops=7:operator (roles: ${TEAM_ROLES.join(', ')})`;
  const mappings: OidcTeamMapping[] = [];
  for (const raw of value.split(',')) {
    const entry = raw.trim();
    if (entry === '') continue;
    const m = /^(.+)=(\d{1,15}):([a-z]+)$/.exec(entry);
    const group = m?.[1]?.trim();
    const teamId = Number(m?.[2]);
    const role = m?.[3] as TeamRole;
    if (!m || !group || !Number.isSafeInteger(teamId) || teamId < 1) return `${JSON.stringify(entry)}: ${expected}`;
    if (!(TEAM_ROLES as readonly string[]).includes(role))
      return `${JSON.stringify(entry)}: ${JSON.stringify(role)} is not a role; ${expected}`;
    mappings.push({ group, teamId, role });
  }
  return mappings;
}

/** The OpenID provider's settings: all three of issuer, client id and secret, or none; PALISADE_PUBLIC_URL with them. */
function oidcSettings(
  read: <K extends keyof typeof fields>(name: K) => z.output<(typeof fields)[K]>,
  publicUrl: string | null,
): OidcConfig | null {
  const issuer = read('PALISADE_OIDC_ISSUER');
  const clientId = read('PALISADE_OIDC_CLIENT_ID');
  const clientSecret = read('PALISADE_OIDC_CLIENT_SECRET');
  const given = {
    PALISADE_OIDC_ISSUER: issuer,
    PALISADE_OIDC_CLIENT_ID: clientId,
    PALISADE_OIDC_CLIENT_SECRET: clientSecret,
  };
  const missing = Object.entries(given).find(([, v]) => v === undefined);
  if (!missing) {
    if (publicUrl === null)
      throw new ConfigError(
        'PALISADE_PUBLIC_URL',
        'single sign-on (PALISADE_OIDC_ISSUER) needs the address people reach the console at, such as https://console.example.com: the provider sends them back to it',
      );
  } else {
    const set = Object.entries(given).find(([, v]) => v !== undefined);
    if (!set) return null;
    throw new ConfigError(
      missing[0],
      `needed with ${set[0]}: single sign-on takes the issuer, the client id and the client secret`,
    );
  }
  return Object.freeze({
    issuer: issuer!.replace(/\/$/, ''),
    clientId: clientId!,
    clientSecret: clientSecret!,
    name: read('PALISADE_OIDC_NAME'),
    allowedDomains: Object.freeze(
      (read('PALISADE_OIDC_ALLOWED_DOMAINS') ?? '')
        .split(',')
        .map((d) => d.trim())
        .filter(Boolean),
    ),
    groupsClaim: read('PALISADE_OIDC_GROUPS_CLAIM'),
    teamMap: Object.freeze(read('PALISADE_OIDC_TEAM_MAP') ?? []),
    redirectUri: `${publicUrl}/api/auth/oidc/callback`,
  });
}

/** What PALISADE_TRUST_PROXY may hold, said in every refusal. */
const TRUST_PROXY_EXPECTED =
  'expected true, false, or a comma-separated list of proxy IPs or CIDRs such as 127.0.0.1,10.0.0.0/8 ' +
  '(or loopback, linklocal, uniquelocal)';

/** The named ranges Fastify's proxy-addr knows. */
const TRUST_PROXY_RANGES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * `PALISADE_TRUST_PROXY` parsed strictly, as Fastify's trustProxy takes it: `true`, `false` or empty
 * (an empty list), or IPs and CIDRs (`10.0.0.0/8`, prefix 1 to 32 or 1 to 128) each checked with
 * `net.isIP` (no zone, no shorthand such as `10.1`). A hop count is refused: Fastify 5 ignores it (it
 * cannot tell the proxy from a client that sends the header itself, docs/security.md). The refusal
 * names the entry and what was expected; any other answer is a list Fastify compiles.
 */
export function trustProxy(value: string): true | string[] | string {
  const v = value.trim();
  if (v === '' || v.toLowerCase() === 'false') return [];
  if (v.toLowerCase() === 'true') return true;
  if (/^\d+$/.test(v))
    return `a hop count (${v}) is not accepted: Fastify cannot check that the nearest peer is a proxy, so it would trust no one; name the proxies instead, ${TRUST_PROXY_EXPECTED}`;
  const entries = v.split(',').map((p) => p.trim());
  for (const entry of entries) {
    if (entry === '') return `an empty entry in the list; ${TRUST_PROXY_EXPECTED}`;
    if (TRUST_PROXY_RANGES.includes(entry)) continue;
    const slash = entry.indexOf('/');
    const ip = slash === -1 ? entry : entry.slice(0, slash);
    const version = isIP(ip);
    if (version === 0 || ip.includes('%'))
      return `${JSON.stringify(entry)} is not an IP address or CIDR; ${TRUST_PROXY_EXPECTED}`;
    if (slash !== -1) {
      const bits = entry.slice(slash + 1);
      const max = version === 4 ? 32 : 128;
      if (!/^[1-9]\d{0,2}$/.test(bits) || Number(bits) > max)
        return `${JSON.stringify(entry)}: expected a prefix length from 1 to ${max} after the slash (true trusts every address)`;
    }
  }
  return entries;
}

/**
 * The trust function for `X-Forwarded-*` ((address, hop) => trusted), or false when no proxy is
 * trusted: handed to Fastify as its `trustProxy`, and used by the link endpoint with the same
 * proxy-addr Fastify reads `request.ip` with, so the two can never disagree about a client's address.
 */
export function proxyTrust(trust: ConsoleConfig['trustProxy']): ((address: string, hop: number) => boolean) | false {
  if (trust === true) return () => true;
  return trust.length === 0 ? false : proxyAddr.compile([...trust]);
}

/** This console's version (its package.json), which is also the agent version it installs. */
export const CONSOLE_VERSION: string = JSON.parse(
  IN_EXECUTABLE
    ? String(executableAsset('package.json'))
    : readFileSync(fileURLToPath(new URL('../../package.json', import.meta.url)), 'utf8'),
).version;

/** Whether an agent's reported version is older than this console's (numeric x.y.z; anything else is not). */
export function isOlderAgent(agentVersion: string | null, consoleVersion = CONSOLE_VERSION): boolean {
  const parts = (v: string) => /^(\d+)\.(\d+)\.(\d+)/.exec(v)?.slice(1, 4).map(Number);
  const a = agentVersion === null ? undefined : parts(agentVersion);
  const c = parts(consoleVersion);
  if (!a || !c) return false;
  for (let i = 0; i < 3; i++) if (a[i] !== c[i]) return a[i]! < c[i]!;
  return false;
}

/**
 * `dist/packages/` of the checkout this console runs from (packages/console/dist/src/config.js); for
 * the single executable, which has no checkout, `artifacts/` in the data directory (docs/deploy.md).
 */
const DEFAULT_ARTIFACTS_DIR = IN_EXECUTABLE
  ? null
  : fileURLToPath(new URL('../../../../dist/packages', import.meta.url));

/** Parses the environment; throws ConfigError naming the first bad variable. */
export function loadConfig(env: Record<string, string | undefined>, cwd = process.cwd()): ConsoleConfig {
  const read = <K extends keyof typeof fields>(name: K): z.output<(typeof fields)[K]> => {
    const raw = env[name];
    // An empty value means "unset", except for lists, where it means an empty list.
    const emptyIsList = name === 'PALISADE_TRUST_PROXY' || name === 'PALISADE_DEFAULT_PERMISSIONS';
    const result = fields[name].safeParse(raw === '' && !emptyIsList ? undefined : raw);
    if (!result.success) throw new ConfigError(name, result.error.issues[0]?.message ?? 'invalid value');
    return result.data as z.output<(typeof fields)[K]>;
  };
  const dataDir = read('PALISADE_DATA_DIR');
  const dataPath = isAbsolute(dataDir) ? dataDir : resolve(cwd, dataDir);
  const permissions = read('PALISADE_DEFAULT_PERMISSIONS');
  const secret = read('PALISADE_SECRET_KEY');
  const trust = read('PALISADE_TRUST_PROXY');
  const metrics = read('PALISADE_METRICS_ADDR');
  const metricsHost = metrics?.slice(0, metrics.lastIndexOf(':')).replace(/^\[(.*)\]$/, '$1');
  const workers = read('PALISADE_WORKERS');
  if (workers > 1 && !read('PALISADE_DATABASE_URL')) {
    throw new ConfigError(
      'PALISADE_WORKERS',
      'several workers need PostgreSQL (set PALISADE_DATABASE_URL); on SQLite run one worker (docs/deploy.md, "Workers")',
    );
  }
  const publicUrl = read('PALISADE_PUBLIC_URL')?.replace(/\/$/, '') ?? null;
  const oidc = oidcSettings(read, publicUrl);
  return Object.freeze({
    port: read('PALISADE_PORT'),
    host: read('PALISADE_HOST'),
    dataDir: dataPath,
    databaseUrl: read('PALISADE_DATABASE_URL') ?? null,
    databasePreparedStatements: read('PALISADE_DATABASE_PREPARED_STATEMENTS'),
    databaseSchema: read('PALISADE_DATABASE_SCHEMA') ?? null,
    redisUrl: read('PALISADE_REDIS_URL') ?? null,
    redisPrefix: read('PALISADE_REDIS_PREFIX'),
    smtpUrl: read('PALISADE_SMTP_URL') ?? null,
    smtpFrom: (() => {
      const from = read('PALISADE_SMTP_FROM');
      return from === undefined ? null : smtpFrom(from);
    })(),
    publicUrl,
    secretKey: secret ? Buffer.from(secret, 'hex') : null,
    trustProxy: trust === true ? true : Object.freeze(trust ?? []),
    allowPrivateTargets: read('PALISADE_ALLOW_PRIVATE_TARGETS'),
    defaultPermissions: Object.freeze(
      permissions === undefined
        ? [...PERMISSIONS]
        : (permissions
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean) as Permission[]),
    ),
    logLevel: read('PALISADE_LOG_LEVEL'),
    accessLog: read('PALISADE_ACCESS_LOG'),
    webSourceMaps: read('PALISADE_WEB_SOURCE_MAPS'),
    metricsAddr:
      metrics === undefined
        ? null
        : Object.freeze({ host: metricsHost!, port: Number(metrics.slice(metrics.lastIndexOf(':') + 1)) }),
    workers,
    bootstrapAdmin: read('PALISADE_BOOTSTRAP_ADMIN'),
    checkinIntervalS: read('PALISADE_CHECKIN_INTERVAL_S'),
    alertIntervalS: read('PALISADE_ALERT_INTERVAL_S'),
    agentTimeoutMs: read('PALISADE_AGENT_TIMEOUT_MS'),
    linkHeartbeatMs: read('PALISADE_LINK_HEARTBEAT_MS'),
    artifactsDir: (() => {
      const dir = read('PALISADE_ARTIFACTS_DIR');
      if (dir === undefined) return DEFAULT_ARTIFACTS_DIR ?? join(dataPath, 'artifacts');
      return isAbsolute(dir) ? dir : resolve(cwd, dir);
    })(),
    retention: Object.freeze({
      rawHours: read('PALISADE_SAMPLES_RAW_HOURS'),
      fiveMinuteDays: read('PALISADE_SAMPLES_5M_DAYS'),
      hourlyDays: read('PALISADE_SAMPLES_1H_DAYS'),
    }),
    auditRetentionDays: read('PALISADE_AUDIT_RETENTION_DAYS'),
    passwordCost: read('PALISADE_PASSWORD_COST'),
    oidc,
  });
}
