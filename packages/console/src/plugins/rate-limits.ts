import type { Redis } from 'ioredis';
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
  /**
   * The shared count of published changes (services/changes.service.ts), read in the same round
   * trip; absent when counted in this process.
   */
  change?: number;
}

export interface RateLimits {
  consume(name: LimitName, key: string): Promise<LimitVerdict>;
  /** Present when the counters are in this process: the same count, answered without a promise. */
  consumeNow?(name: LimitName, key: string): LimitVerdict;
}

/** The Redis key counting published changes; changes.service.ts bumps it with each message. */
export const changeCounterKey = (prefix: string) => `${prefix}:changes:n`;

/**
 * Counts one attempt in a fixed window and reads the change counter, in one round trip:
 * KEYS[1] the window's counter, KEYS[2] the change counter; ARGV[1] the window in ms.
 */
const COUNT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if count == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl, tonumber(redis.call('GET', KEYS[2]) or '0')}
`;

type CountingRedis = Redis & {
  palisadeCountAttempt(window: string, changes: string, ms: number): Promise<[number, number, number]>;
};

/**
 * Where the counters live: Redis when configured (one round trip, a Lua script); the shared database
 * when several processes may serve (PostgreSQL: one upsert); otherwise in this process (no I/O).
 * Redis and the database also answer the change counter (docs/performance.md, "v1 reads from memory").
 */
export function createRateLimits(options: {
  redis: Redis | null;
  db: Database | null;
  clock: () => number;
  prefix?: string;
}): RateLimits {
  const { redis, db, clock, prefix = 'palisade' } = options;
  if (!redis && db) return databaseRateLimits(db, clock);
  if (!redis) return memoryRateLimits(clock);
  if (!('palisadeCountAttempt' in redis))
    redis.defineCommand('palisadeCountAttempt', { numberOfKeys: 2, lua: COUNT_SCRIPT });
  const counting = redis as CountingRedis;
  const changes = changeCounterKey(prefix);
  return {
    async consume(name, key) {
      const { points, durationS } = LIMITS[name];
      const [count, ttl, change] = await counting.palisadeCountAttempt(
        `${prefix}:rl:${name}:${key}`,
        changes,
        durationS * 1000,
      );
      const resetS = Math.max(1, Math.ceil(ttl / 1000));
      return { allowed: count <= points, limit: points, remaining: Math.max(0, points - count), resetS, change };
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
      return {
        allowed: count <= points,
        limit: points,
        remaining: Math.max(0, points - count),
        resetS,
        change: Number(row.change),
      };
    },
  };
}

/** Past this many counters, ended windows are swept out before a new one is added. */
const SWEEP_AT = 10_000;

/**
 * Fixed windows counted in this process (SQLite: one serving process), exact and without I/O: a Map
 * of counters, ended windows swept out as it grows.
 */
function memoryRateLimits(clock: () => number): RateLimits {
  const windows = new Map<string, { count: number; end: number }>();
  let sweepAt = SWEEP_AT;
  const consumeNow = (name: LimitName, key: string): LimitVerdict => {
    const { points, durationS } = LIMITS[name];
    const now = clock();
    const id = `${name}:${key}`;
    let window = windows.get(id);
    if (!window || window.end <= now) {
      if (!window && windows.size >= sweepAt) {
        for (const [k, w] of windows) if (w.end <= now) windows.delete(k);
        sweepAt = Math.max(SWEEP_AT, windows.size * 2);
      }
      window = { count: 0, end: now + durationS * 1000 };
      windows.set(id, window);
    }
    window.count += 1;
    const resetS = Math.max(1, Math.ceil((window.end - now) / 1000));
    return { allowed: window.count <= points, limit: points, remaining: Math.max(0, points - window.count), resetS };
  };
  return { consumeNow, consume: async (name, key) => consumeNow(name, key) };
}
