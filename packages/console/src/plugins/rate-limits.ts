import type { Redis } from 'ioredis';
import { type RateLimiterAbstract, RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';

/** The spec's fixed windows. Each window starts with the first attempt and lasts `durationS`. */
export const LIMITS = {
  login: { points: 8, durationS: 60 },
  register: { points: 10, durationS: 3600 },
  token: { points: 120, durationS: 60 },
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

/** In-process counters, or Redis-backed ones shared by every console process when Redis is configured. */
export function createRateLimits(redis: Redis | null): RateLimits {
  const limiters = new Map<LimitName, RateLimiterAbstract>();
  for (const [name, { points, durationS }] of Object.entries(LIMITS) as [LimitName, (typeof LIMITS)[LimitName]][]) {
    const options = { points, duration: durationS, keyPrefix: `palisade:rl:${name}` };
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
