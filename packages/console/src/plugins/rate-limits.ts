import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import type { Database } from '../db/schema.js';
import { countAttempt } from '../repositories/rate-limits.repository.js';

/** The spec's fixed windows. Each window starts with the first attempt and lasts `durationS`. */
export const LIMITS = {
  login: { points: 8, durationS: 60 },
  register: { points: 10, durationS: 3600 },
  token: { points: 120, durationS: 60 },
  /** Outbound link upgrades from one source address: a NAT in front of a fleet reconnecting after a restart fits. */
  link: { points: 600, durationS: 60 },
  /** Link upgrades of one server: two agents fighting over one daemon token are slowed to this. */
  link_server: { points: 12, durationS: 60 },
} as const;

export type LimitName = keyof typeof LIMITS;

export interface LimitVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetS: number;
}

export interface RateLimits {
  consume(name: LimitName, key: string): Promise<LimitVerdict>;
}

/**
 * Where the counters live: Redis when configured; the shared database when several processes may
 * serve (PostgreSQL); otherwise in this process.
 */
export function createRateLimits(options: {
  redis: Redis | null;
  db: Database | null;
  clock: () => number;
  prefix?: string;
}): RateLimits {
  const { redis, db, clock, prefix = 'palisade' } = options;
  if (!redis && db) return databaseRateLimits(db, clock);
  const limiters = new Map<LimitName, RateLimiterAbstract>();
  for (const [name, { points, durationS }] of Object.entries(LIMITS) as [LimitName, (typeof LIMITS)[LimitName]][]) {
    const options = { points, duration: durationS, keyPrefix: `${prefix}:rl:${name}` };
    limiters.set(
      name,
      redis ? new RateLimiterRedis({ ...options, storeClient: redis }) : new RateLimiterMemory(options),
    );
  }
  return {
    async consume(name, key) {
      const { points } = LIMITS[name];
      try {
        const res = await limiters.get(name)!.consume(key);
        return {
          allowed: true,
          limit: points,
          remaining: res.remainingPoints,
          resetS: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
        };
      } catch (err) {
        if (!(err instanceof RateLimiterRes)) throw err;
        return { allowed: false, limit: points, remaining: 0, resetS: Math.max(1, Math.ceil(err.msBeforeNext / 1000)) };
      }
    },
  };
}

/** Fixed windows counted in the database, one atomic upsert per attempt. */
function databaseRateLimits(db: Database, clock: () => number): RateLimits {
  return {
    async consume(name, key) {
      const { points, durationS } = LIMITS[name];
      const now = clock();
      const row = await countAttempt(db, `${name}:${key}`, now, durationS * 1000);
      const resetS = Math.max(1, Math.ceil((Number(row.window_end) - now) / 1000));
      const count = Number(row.count);
      return { allowed: count <= points, limit: points, remaining: Math.max(0, points - count), resetS };
    },
  };
}
