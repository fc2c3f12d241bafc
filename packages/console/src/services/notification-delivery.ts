import type { Database } from '../db/schema.js';
import { recordChannelResult } from '../repositories/alerts.repository.js';
import {
  claimNotification,
  type DeliveryCandidate,
  deliveryCandidates,
  type EndpointKey,
  findWebhook,
  finishAttempt,
  insertAttempt,
  postponeQueue,
  recordEndpointResult,
} from '../repositories/notifications.repository.js';
import type { Sender } from './notification-sending.js';

/** Retries: 10 s, doubling, at most an hour apart; given up 26 hours after the notification was queued. */
export const FIRST_RETRY_MS = 10_000;
export const MAX_RETRY_MS = 3600_000;
export const GIVE_UP_AFTER_MS = 26 * 3600_000;
const CLAIM_MS = 60_000;
/**
 * Concurrency (docs/decisions.md, "Notification delivery"): at most 2 deliveries in flight per
 * endpoint (across processes, by the claim), at most 32 started and unanswered for under 1 s, and
 * at most 256 in flight overall per process. An endpoint that accepts and never answers holds its
 * 2 slots until the timeout, but after 1 s no longer holds back the others' starts. Slots are
 * shared by account first (docs/alerts.md, "Delivery"): with n accounts having something due or in
 * flight, one account holds at most 1/(n+1) of each bound (at least one start and one endpoint's
 * slots), so there is always room for an account that has nothing in flight yet.
 */
export const PER_ENDPOINT = 2;
export const MAX_STARTING = 32;
export const MAX_IN_FLIGHT = 256;
/** One account's share of a bound when `accounts` accounts are busy: room is kept for one more. */
export function accountShare(bound: number, accounts: number, least: number): number {
  return Math.max(least, Math.floor(bound / (accounts + 1)));
}
const SLOW_AFTER_MS = 1000;

export function retryDelay(attempts: number): number {
  return Math.min(MAX_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
}

/** A delivery this process has in flight. */
interface InFlight {
  endpoint: EndpointKey;
  /** What its bound is counted by: a webhook's URL, or `channel:<id>`. */
  url: string;
  startedAt: number;
  done: Promise<boolean>;
}

/** Deliveries in flight counted by endpoint, by target and by account, and how many are still starting. */
function countInFlight(inFlight: Iterable<InFlight>, now: number) {
  const perEndpoint = new Map<string, { endpoint: EndpointKey; n: number }>();
  const perUrl = new Map<string, number>();
  const perAccount = new Map<number, { inFlight: number; starting: number }>();
  let starting = 0;
  for (const d of inFlight) {
    const key = `${d.endpoint.accountId}:${d.endpoint.channelId}`;
    perEndpoint.set(key, { endpoint: d.endpoint, n: (perEndpoint.get(key)?.n ?? 0) + 1 });
    perUrl.set(d.url, (perUrl.get(d.url) ?? 0) + 1);
    const account = perAccount.get(d.endpoint.accountId) ?? { inFlight: 0, starting: 0 };
    account.inFlight += 1;
    if (now - d.startedAt < SLOW_AFTER_MS) {
      starting += 1;
      account.starting += 1;
    }
    perAccount.set(d.endpoint.accountId, account);
  }
  return { perEndpoint, perUrl, perAccount, starting };
}

/** The bounds one account is held to when `accounts` accounts are busy. */
const busyShare = (accounts: number) => ({
  inFlight: accountShare(MAX_IN_FLIGHT, accounts, PER_ENDPOINT),
  starting: accountShare(MAX_STARTING, accounts, 1),
});

/**
 * The outbox worker (docs/alerts.md, "Delivery"): due notifications claimed fairly within the
 * bounds above, each sent (notification-sending.ts) and its attempt recorded, retried with back-off.
 */
export function createDelivery({ db, clock, sender }: { db: Database; clock: () => number; sender: Sender }) {
  /** This process's deliveries in flight, by notification id. */
  const inFlight = new Map<number, InFlight>();
  let pumping: Promise<number> | null = null;
  let pumpAgain = false;
  let closing = false;

  /**
   * One attempt: the send, then its bookkeeping (the log line, the endpoint's record, the row's next
   * state, the endpoint's queue postponed) in one transaction (docs/alerts.md, "Delivery"), so a
   * crash leaves either all of it or none of it (the claim then runs out and the row is sent again).
   * The row's state is written only while `lease` (the claim's locked_until) is still this
   * process's: a claim that ran out and was taken by another console is that console's to finish.
   */
  async function deliver(row: DeliveryCandidate, lease: number): Promise<boolean> {
    const attempts = row.attempts + 1;
    const started = clock();
    const { statusCode, error } = await sender.send(sender.endpointOf(row), row);
    const finished = clock();
    const endpoint = { accountId: row.account_id, channelId: row.channel_id };
    const giveUp = finished - row.created_at >= GIVE_UP_AFTER_MS;
    const retryAt = finished + retryDelay(attempts);
    await db.transaction().execute(async (trx) => {
      await insertAttempt(trx, {
        notification_id: row.id,
        account_id: row.account_id,
        at: finished,
        url: row.url,
        status_code: statusCode,
        error,
        duration_ms: Math.max(0, finished - started),
      });
      if (row.channel_id === 0) await recordEndpointResult(trx, row.account_id, row.url, finished, error === null);
      else await recordChannelResult(trx, row.channel_id, finished, error);
      if (error === null) {
        await finishAttempt(trx, row.id, lease, {
          status: 'delivered',
          attempts,
          next_attempt_at: finished,
          locked_until: 0,
          delivered_at: finished,
        });
        return;
      }
      // A webhook removed meanwhile parks the row rather than queueing it for an endpoint that is gone.
      const hook = row.channel_id === 0 ? await findWebhook(trx, row.account_id) : null;
      const held = await finishAttempt(trx, row.id, lease, {
        status: giveUp ? 'failed' : row.channel_id !== 0 || hook ? 'queued' : 'parked',
        attempts,
        next_attempt_at: retryAt,
        locked_until: 0,
        delivered_at: null,
      });
      if (held && (row.channel_id !== 0 || hook?.url === row.url))
        await postponeQueue(trx, endpoint, finished, retryAt);
    });
    return error === null;
  }

  /**
   * Claims one candidate and starts its delivery; `afterEach` runs when it ends. Answers the delivery
   * wrapped, not awaited (an async function would wait for a promise it answered); null: another process has it.
   */
  async function start(
    row: DeliveryCandidate,
    target: string,
    now: number,
    onError: (err: unknown) => void,
    afterEach: (() => void) | null,
  ): Promise<{ done: Promise<boolean> } | null> {
    const claimed = await claimNotification(db, {
      id: row.id,
      accountId: row.account_id,
      channelId: row.channel_id,
      now,
      until: now + CLAIM_MS,
      perEndpoint: PER_ENDPOINT,
    });
    if (!claimed) return null;
    const done = deliver(row, now + CLAIM_MS)
      .catch((err) => {
        onError(err);
        return false;
      })
      .finally(() => {
        inFlight.delete(row.id);
        afterEach?.();
      });
    const endpoint = { accountId: row.account_id, channelId: row.channel_id };
    inFlight.set(row.id, { endpoint, url: target, startedAt: now, done });
    return { done };
  }

  /**
   * Starts as many due deliveries as the bounds allow, fairly; answers their outcomes (true:
   * delivered). `afterEach` runs when one ends (the worker starts the next there).
   */
  async function startDeliveries(
    budget: number,
    onError: (err: unknown) => void,
    afterEach: (() => void) | null,
  ): Promise<Promise<boolean>[]> {
    const now = clock();
    const { perEndpoint, perUrl, perAccount, starting } = countInFlight(inFlight.values(), now);
    let free = Math.min(budget, MAX_STARTING - starting, MAX_IN_FLIGHT - inFlight.size);
    if (free <= 0) return [];
    // Accounts already at the share they would have with one more account busy are left out of the
    // pick-up: what they hold is theirs, the rest is kept for the others.
    const before = busyShare(perAccount.size);
    const skipAccounts = [...perAccount]
      .filter(([, a]) => a.inFlight >= before.inFlight || a.starting >= before.starting)
      .map(([id]) => id);
    const skipEndpoints = [...perEndpoint.values()].filter((e) => e.n >= PER_ENDPOINT).map((e) => e.endpoint);
    const candidates = await deliveryCandidates(db, {
      now,
      perEndpoint: PER_ENDPOINT,
      limit: free * 2,
      skipEndpoints,
      skipAccounts,
    });
    const share = busyShare(new Set([...perAccount.keys(), ...candidates.map((c) => c.account_id)]).size);
    const started: Promise<boolean>[] = [];
    for (const row of candidates) {
      if (free <= 0) break;
      const account = perAccount.get(row.account_id) ?? { inFlight: 0, starting: 0 };
      if (account.inFlight >= share.inFlight || account.starting >= share.starting) continue;
      // A webhook URL is bounded across accounts that share it; an alert channel by itself (many
      // accounts' Slack channels share one host, and must not share 2 slots).
      const target = row.channel_id === 0 ? row.url : `channel:${row.channel_id}`;
      if ((perUrl.get(target) ?? 0) >= PER_ENDPOINT) continue;
      const delivery = await start(row, target, now, onError, afterEach);
      if (!delivery) continue;
      perUrl.set(target, (perUrl.get(target) ?? 0) + 1);
      account.inFlight += 1;
      account.starting += 1;
      perAccount.set(row.account_id, account);
      free -= 1;
      started.push(delivery.done);
    }
    return started;
  }

  /** Fills free delivery slots; overlapping calls coalesce into one more round. */
  function pump(onError: (err: unknown) => void): Promise<number> {
    if (closing) return Promise.resolve(0);
    if (pumping) {
      pumpAgain = true;
      return pumping;
    }
    const again = () => void pump(onError);
    pumping = (async () => {
      let total = 0;
      do {
        pumpAgain = false;
        total += (await startDeliveries(Number.POSITIVE_INFINITY, onError, again)).length;
      } while (pumpAgain);
      return total;
    })()
      .catch((err) => {
        onError(err);
        return 0;
      })
      .finally(() => {
        pumping = null;
      });
    return pumping;
  }

  return {
    /**
     * Starts due deliveries in the background up to the bounds (the worker calls it every second;
     * each finished delivery calls it again). Claims are conditional updates, so two console
     * processes never send the same notification at once.
     */
    pump,

    /** One full round, for tests and the admin CLI: starts what is due (at most `limit`) and waits for those deliveries. */
    async runOnce(limit = 20): Promise<number> {
      const errors: unknown[] = [];
      let started = 0;
      let sent = 0;
      while (started < limit) {
        const batch = await startDeliveries(limit - started, (err) => errors.push(err), null);
        if (batch.length === 0) break;
        started += batch.length;
        sent += (await Promise.all(batch)).filter(Boolean).length;
      }
      if (errors.length > 0) throw errors[0];
      return sent;
    },

    /** Stops starting deliveries and waits for this process's in flight (at shutdown, before the database closes). */
    async settle() {
      closing = true;
      await pumping;
      await Promise.all([...inFlight.values()].map((d) => d.done));
    },
  };
}
