import { isIPv6 } from 'node:net';
import type { Redis } from 'ioredis';
import type { Database } from '../db/schema.js';
import { countAttempts } from '../repositories/rate-limits.repository.js';

/** The spec's fixed windows. Each window starts with the first attempt and lasts `durationS`. */
export const LIMITS = {
  login: { points: 8, durationS: 60 },
  /** Two-factor codes judged on one account, from every address together (docs/security.md, "Account security"). */
  two_factor: { points: 8, durationS: 60 },
  /** "Send a test" and confirmation e-mails of one alert channel (docs/alerts.md, "Send a test"). */
  channel_test: { points: 5, durationS: 60 },
  /** "Send a test" and confirmation e-mails of one account, every channel together. */
  channel_test_account: { points: 20, durationS: 3600 },
  register: { points: 10, durationS: 3600 },
  token: { points: 120, durationS: 60 },
  /** Outbound link upgrades refused for their token (missing, unknown) from one source address; valid ones are not counted here. */
  link: { points: 600, durationS: 60 },
  /** Link upgrades of one server: two agents fighting over one daemon token are slowed to this. */
  link_server: { points: 12, durationS: 60 },
} as const;

export type LimitName = keyof typeof LIMITS;

/**
 * The key an address is counted under: an IPv4 address as it is (an IPv4-mapped IPv6 address as its
 * IPv4 one), an IPv6 address by its /64 — one host is usually given a whole /64, so counting single
 * IPv6 addresses would let it pick a fresh one for every attempt.
 */
export function addressKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (!isIPv6(ip)) return ip;
  const [head = '', tail = ''] = ip.toLowerCase().split('%')[0]!.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  // An embedded IPv4 tail (::a.b.c.d) is two groups; only the first four groups matter here.
  const groups = ip.includes('::')
    ? [...left, ...Array(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  return `${groups
    .slice(0, 4)
    .map((g) => (Number.parseInt(g, 16) || 0).toString(16))
    .join(':')}::/64`;
}

export interface LimitVerdict {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the window resets (at least 1). */
  resetS: number;
  /**
   * Counted in the database (PostgreSQL, no Redis): the shared change counter as read by the
   * statement that counted this attempt, which started after the attempt was made.
   */
  change?: number;
}

export interface RateLimits {
  consume(name: LimitName, key: string): Promise<LimitVerdict>;
  /** Present when the counters are in this process: the same count, answered without a promise. */
  consumeNow?(name: LimitName, key: string): LimitVerdict;
  /** Attempts counted, and the round trips (batches) that counted them: none in process. */
  stats(): { attempts: number; batches: number };
  /** True when every verdict of `consume` carries `change` (counted in the database). */
  readonly readsChangeCounter?: boolean;
}

/** One window's share of a batch: its id (`name:key`), the attempts on it, the window's length. */
interface WindowCount {
  id: string;
  n: number;
  durationMs: number;
}

/**
 * A counted batch: per window (in the given order), the count after the batch's attempts and the ms
 * left; and the change counter when the batch's statement read it.
 */
type BatchCounted = { windows: Array<{ count: number; msLeft: number }>; change?: number };

/**
 * Counts several windows' attempts in fixed windows, in one round trip: KEYS[i] window i's
 * counter, ARGV[2i-1] the attempts on it, ARGV[2i] its length in ms. Answers each window's count
 * and ms left.
 */
const COUNT_SCRIPT = `
local n = #KEYS
local out = {}
for i = 1, n do
  local attempts = tonumber(ARGV[2 * i - 1])
  local count = redis.call('INCRBY', KEYS[i], attempts)
  local ttl = redis.call('PTTL', KEYS[i])
  if count == attempts or ttl < 0 then
    redis.call('PEXPIRE', KEYS[i], ARGV[2 * i])
    ttl = tonumber(ARGV[2 * i])
  end
  out[2 * i - 1] = count
  out[2 * i] = ttl
end
return out
`;

type CountingRedis = Redis & {
  palisadeCountAttempts(...args: Array<string | number>): Promise<number[]>;
};

/**
 * Where the counters live: Redis when configured (a Lua script); the shared database when several
 * processes may serve (PostgreSQL: an upsert); otherwise in this process (no I/O). Redis and the
 * database count in batches, one round trip each (docs/decisions.md, "Rate limits counted in batches").
 */
export function createRateLimits(options: {
  redis: Redis | null;
  db: Database | null;
  clock: () => number;
  prefix?: string;
}): RateLimits {
  const { redis, db, clock, prefix = 'palisade' } = options;
  if (!redis && db)
    return {
      ...batchedRateLimits(async (windows) => {
        const now = clock();
        const { counted, change } = await countAttempts(db, windows, now);
        return {
          windows: counted.map((row) => ({ count: row.count, msLeft: row.windowEnd - now })),
          ...(change === null ? {} : { change }),
        };
      }),
      readsChangeCounter: true,
    };
  if (!redis) return memoryRateLimits(clock);
  if (!('palisadeCountAttempts' in redis)) redis.defineCommand('palisadeCountAttempts', { lua: COUNT_SCRIPT });
  const counting = redis as CountingRedis;
  return batchedRateLimits(async (windows) => {
    const args: Array<string | number> = [windows.length];
    for (const w of windows) args.push(`${prefix}:rl:${w.id}`);
    for (const w of windows) args.push(w.n, w.durationMs);
    const out = await counting.palisadeCountAttempts(...args);
    return { windows: windows.map((_, i) => ({ count: Number(out[2 * i]), msLeft: Number(out[2 * i + 1]) })) };
  });
}

interface Waiting {
  points: number;
  resolve: (verdict: LimitVerdict) => void;
  reject: (err: unknown) => void;
}

/**
 * Shared counters, counted in batches: the attempts that arrive in the same turn of the event loop,
 * or while `BATCHES_IN_FLIGHT` batches are out, go together in the next one (as the reads of the
 * change counter, services/coherence/counter-reads.ts). Attempts on one window are summed; the
 * window's count after the batch is `count`, so its `n` attempts get count − n + 1 … count, in the
 * order they arrived: each count is handed out once across every process, so exactly `points` of a
 * window are allowed. A failed batch fails each of its attempts with the same error.
 */
/** Two: while one batch is out, the next can be; one alone put every connection in lockstep behind it. */
const BATCHES_IN_FLIGHT = 2;

function batchedRateLimits(count: (windows: WindowCount[]) => Promise<BatchCounted>): RateLimits {
  let pending = new Map<string, { durationMs: number; waiting: Waiting[] }>();
  let scheduled = false;
  let inFlight = 0;
  const counts = { attempts: 0, batches: 0 };

  function schedule() {
    if (scheduled || inFlight >= BATCHES_IN_FLIGHT || pending.size === 0) return;
    scheduled = true;
    setImmediate(flush);
  }

  function flush() {
    scheduled = false;
    const batch = pending;
    pending = new Map();
    // Sorted by id: concurrent batches of several processes lock the rows in one order (no deadlock).
    const ids = [...batch.keys()].sort();
    const windows = ids.map((id) => {
      const { durationMs, waiting } = batch.get(id)!;
      return { id, n: waiting.length, durationMs };
    });
    inFlight += 1;
    counts.batches += 1;
    count(windows)
      .then(({ windows: counted, change }) => {
        ids.forEach((id, i) => {
          const { waiting, durationMs } = batch.get(id)!;
          const { count: total, msLeft } = counted[i]!;
          // At most the window's length: another batch may have started it on a later clock reading.
          const resetS = Math.max(1, Math.ceil(Math.min(msLeft, durationMs) / 1000));
          waiting.forEach((w, j) => {
            const mine = total - waiting.length + 1 + j;
            w.resolve({
              allowed: mine <= w.points,
              limit: w.points,
              remaining: Math.max(0, w.points - mine),
              resetS,
              ...(change === undefined ? {} : { change }),
            });
          });
        });
      })
      // Also when handing out throws: an attempt already answered ignores its reject.
      .catch((err: unknown) => {
        for (const { waiting } of batch.values()) for (const w of waiting) w.reject(err);
      })
      .finally(() => {
        inFlight -= 1;
        schedule();
      });
  }

  return {
    consume(name, key) {
      const { points, durationS } = LIMITS[name];
      const id = `${name}:${key}`;
      counts.attempts += 1;
      return new Promise<LimitVerdict>((resolve, reject) => {
        let window = pending.get(id);
        if (!window) {
          window = { durationMs: durationS * 1000, waiting: [] };
          pending.set(id, window);
        }
        window.waiting.push({ points, resolve, reject });
        schedule();
      });
    },
    stats: () => ({ ...counts }),
  };
}

/** Past this many counters, ended windows are swept out before a new one is added. */
const SWEEP_AT = 10_000;

/**
 * Fixed windows counted in this process (SQLite: one serving process), exact and without I/O: a Map
 * of counters, ended windows swept out as it grows.
 */
function memoryRateLimits(clock: () => number): RateLimits {
  // A map per limit, so a request's key is looked up as given (no `name:key` string made and hashed each time).
  const byLimit = new Map<LimitName, { windows: Map<string, { count: number; end: number }>; sweepAt: number }>();
  let attempts = 0;
  const consumeNow = (name: LimitName, key: string): LimitVerdict => {
    attempts += 1;
    const { points, durationS } = LIMITS[name];
    const now = clock();
    let limit = byLimit.get(name);
    if (!limit) {
      limit = { windows: new Map(), sweepAt: SWEEP_AT };
      byLimit.set(name, limit);
    }
    const { windows } = limit;
    let window = windows.get(key);
    if (!window || window.end <= now) {
      if (!window && windows.size >= limit.sweepAt) {
        for (const [k, w] of windows) if (w.end <= now) windows.delete(k);
        limit.sweepAt = Math.max(SWEEP_AT, windows.size * 2);
      }
      window = { count: 0, end: now + durationS * 1000 };
      windows.set(key, window);
    }
    window.count += 1;
    const resetS = Math.max(1, Math.ceil((window.end - now) / 1000));
    return { allowed: window.count <= points, limit: points, remaining: Math.max(0, points - window.count), resetS };
  };
  return {
    consumeNow,
    consume: async (name, key) => consumeNow(name, key),
    stats: () => ({ attempts, batches: 0 }),
  };
}
