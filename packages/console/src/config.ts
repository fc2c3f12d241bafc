import { isAbsolute, resolve } from 'node:path';
import { z } from 'zod';

/** The console's settings, read once from the environment at start and frozen. Nothing else reads `process.env`. */
export interface ConsoleConfig {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly databaseSchema: string | null;
  readonly redisUrl: string | null;
  readonly redisPrefix: string;
  readonly publicUrl: string | null;
  readonly secretKey: Buffer | null;
  readonly trustProxy: readonly string[];
  readonly allowPrivateTargets: boolean;
  readonly defaultPermissions: readonly Permission[];
  readonly logLevel: string;
  readonly bootstrapAdmin: boolean;
  readonly checkinIntervalS: number;
  readonly agentTimeoutMs: number;
  readonly retention: { readonly rawHours: number; readonly fiveMinuteDays: number; readonly hourlyDays: number };
}

export const PERMISSIONS = ['control.read', 'control.edit'] as const;
export type Permission = (typeof PERMISSIONS)[number];

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

const fields = {
  PALISADE_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  PALISADE_HOST: z.string().trim().min(1).default('127.0.0.1'),
  PALISADE_DATA_DIR: z.string().trim().min(1).default('./data'),
  PALISADE_DATABASE_URL: z
    .string()
    .trim()
    .refine((v) => /^postgres(ql)?:\/\//.test(v), 'expected a postgres:// URL (leave it unset for SQLite)')
    .optional(),
  PALISADE_DATABASE_SCHEMA: z
    .string()
    .regex(/^[a-z_][a-z0-9_]{0,62}$/, 'expected a lower-case SQL identifier')
    .optional(),
  PALISADE_REDIS_URL: z
    .string()
    .trim()
    .refine((v) => /^rediss?:\/\//.test(v), 'expected a redis:// URL')
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
    .trim()
    .refine(
      (v) => v === '' || v.split(',').every((p) => /^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(p.trim())),
      'expected a comma-separated list of proxy IPs or CIDRs',
    )
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
  PALISADE_CHECKIN_INTERVAL_S: z.coerce.number().int().min(5).max(3600).default(30),
  PALISADE_AGENT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5000),
  PALISADE_SAMPLES_RAW_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 30)
    .default(24),
  PALISADE_SAMPLES_5M_DAYS: z.coerce.number().int().min(1).max(365).default(7),
  PALISADE_SAMPLES_1H_DAYS: z.coerce.number().int().min(1).max(3650).default(90),
};

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
  const permissions = read('PALISADE_DEFAULT_PERMISSIONS');
  const secret = read('PALISADE_SECRET_KEY');
  const trust = read('PALISADE_TRUST_PROXY');
  return Object.freeze({
    port: read('PALISADE_PORT'),
    host: read('PALISADE_HOST'),
    dataDir: isAbsolute(dataDir) ? dataDir : resolve(cwd, dataDir),
    databaseUrl: read('PALISADE_DATABASE_URL') ?? null,
    databaseSchema: read('PALISADE_DATABASE_SCHEMA') ?? null,
    redisUrl: read('PALISADE_REDIS_URL') ?? null,
    redisPrefix: read('PALISADE_REDIS_PREFIX'),
    publicUrl: read('PALISADE_PUBLIC_URL')?.replace(/\/$/, '') ?? null,
    secretKey: secret ? Buffer.from(secret, 'hex') : null,
    trustProxy: Object.freeze(
      trust
        ? trust
            .split(',')
            .map((p) => p.trim())
            .filter(Boolean)
        : [],
    ),
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
    bootstrapAdmin: read('PALISADE_BOOTSTRAP_ADMIN'),
    checkinIntervalS: read('PALISADE_CHECKIN_INTERVAL_S'),
    agentTimeoutMs: read('PALISADE_AGENT_TIMEOUT_MS'),
    retention: Object.freeze({
      rawHours: read('PALISADE_SAMPLES_RAW_HOURS'),
      fiveMinuteDays: read('PALISADE_SAMPLES_5M_DAYS'),
      hourlyDays: read('PALISADE_SAMPLES_1H_DAYS'),
    }),
  });
}
