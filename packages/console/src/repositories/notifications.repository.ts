import { type ExpressionBuilder, type Insertable, sql } from 'kysely';
import type { Database, DB, NotificationAttemptsTable, NotificationsTable } from '../db/schema.js';
import type { PageRequest } from '../validation.js';
import { isPostgres } from './dialect.js';
import { keysetPage } from './paging.js';

export async function findWebhook(db: Database, accountId: number) {
  return db.selectFrom('account_webhooks').selectAll().where('account_id', '=', accountId).executeTakeFirst();
}

export async function upsertWebhook(
  db: Database,
  webhook: { account_id: number; url: string; secret_enc: string; updated_at: number },
) {
  await db
    .insertInto('account_webhooks')
    .values(webhook)
    .onConflict((oc) =>
      oc
        .column('account_id')
        .doUpdateSet({ url: webhook.url, updated_at: webhook.updated_at, failures: 0, last_success_at: null }),
    )
    .execute();
}

export async function deleteWebhook(db: Database, accountId: number) {
  const result = await db.deleteFrom('account_webhooks').where('account_id', '=', accountId).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function insertNotification(db: Database, notification: Insertable<NotificationsTable>) {
  await db.insertInto('notifications').values(notification).execute();
}

/** Queues many notifications, a statement per 1,000 (within both databases' limits on bound values). */
export async function insertNotifications(db: Database, notifications: Insertable<NotificationsTable>[]) {
  for (let start = 0; start < notifications.length; start += 1000) {
    await db
      .insertInto('notifications')
      .values(notifications.slice(start, start + 1000))
      .execute();
  }
}

/** Which of these accounts have a webhook set. */
export async function accountsWithWebhook(db: Database, accountIds: number[]) {
  if (accountIds.length === 0) return new Set<number>();
  const rows = await db
    .selectFrom('account_webhooks')
    .select('account_id')
    .where('account_id', 'in', accountIds)
    .execute();
  return new Set(rows.map((r) => Number(r.account_id)));
}

/**
 * A delivery made at once rather than through the queue ("send a test"): its row is written before
 * the send, so the delivery carries its own id as queued ones do (`X-Palisade-Delivery`), as done
 * and not polled (`failed` until finishTestDelivery records the outcome).
 */
export async function insertTestDelivery(db: Database, notification: Insertable<NotificationsTable>) {
  const row = await db.insertInto('notifications').values(notification).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

/** The outcome of a test delivery: its row's state and its attempt in the log, together. */
export async function finishTestDelivery(
  db: Database,
  id: number,
  fields: Pick<NotificationsTable, 'status' | 'delivered_at' | 'next_attempt_at'>,
  attempt: Omit<Insertable<NotificationAttemptsTable>, 'notification_id'>,
) {
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('notifications').set(fields).where('id', '=', id).execute();
    await trx
      .insertInto('notification_attempts')
      .values({ ...attempt, notification_id: id })
      .execute();
  });
}

export interface DeliveryCandidate {
  id: number;
  account_id: number;
  /** 0: the account's signed webhook; otherwise an alert channel. */
  channel_id: number;
  kind: string;
  payload: string;
  attempts: number;
  created_at: number;
  /** The webhook's URL, or the channel's hint (its sealed target is `target_enc`): what the delivery log shows. */
  url: string;
  secret_enc: string | null;
  channel_kind: string | null;
  target_enc: string | null;
}

/** One endpoint: the account's webhook (channel 0) or one alert channel. */
export interface EndpointKey {
  accountId: number;
  channelId: number;
}

/**
 * Due notifications in delivery order, fair across accounts first, then across each account's
 * endpoints (docs/alerts.md, "Delivery"). It looks at destinations, not rows: the endpoints
 * (account webhooks and alert channels) that have something due, each found by one index seek for
 * its oldest due row, numbered within their account (those not failing first, then the oldest
 * waiting); then at most `perEndpoint` rows of each of those, again one index seek each. So no
 * round reads or sorts every due row: 100,000 rows queued for other endpoints cost a healthy
 * endpoint's pick-up nothing (bench/notification-delivery.mjs). The rows come round-robin across
 * accounts: every account's first pick before any account's second, whatever an account's
 * history (a new account, or one that just changed its webhook URL, is not put behind others), so
 * one account with 500 due endpoints cannot fill the page before another's one. Within an account,
 * each endpoint's oldest goes before any endpoint's second. Endpoints in `skipEndpoints` and
 * accounts in `skipAccounts` (at their bound in this process) are left out.
 */
export async function deliveryCandidates(
  db: Database,
  opts: {
    now: number;
    perEndpoint: number;
    limit: number;
    skipEndpoints: EndpointKey[];
    skipAccounts?: number[];
  },
): Promise<DeliveryCandidate[]> {
  const { now } = opts;
  const due = sql`n.status = 'queued' AND n.next_attempt_at <= ${now} AND n.locked_until <= ${now}`;
  // As IN lists, not one condition per endpoint: with a thousand busy endpoints that cost seconds a round.
  const webhooks = opts.skipEndpoints.filter((e) => e.channelId === 0).map((e) => sql`${e.accountId}`);
  const channels = opts.skipEndpoints.filter((e) => e.channelId !== 0).map((e) => sql`${e.channelId}`);
  const accounts = (opts.skipAccounts ?? []).map((id) => sql`${id}`);
  const skip = sql.join(
    [
      ...(webhooks.length > 0 ? [sql`AND NOT (e.channel_id = 0 AND e.account_id IN (${sql.join(webhooks)}))`] : []),
      ...(channels.length > 0 ? [sql`AND e.channel_id NOT IN (${sql.join(channels)})`] : []),
      ...(accounts.length > 0 ? [sql`AND e.account_id NOT IN (${sql.join(accounts)})`] : []),
    ],
    sql` `,
  );
  // An account webhook's rows, by the webhook queue index (account, channel, status, next_attempt_at):
  // a plain equality the planners estimate from the statistics (migration 0031 says why not `+ 0`).
  const webhookRows = sql`n.channel_id = 0`;
  // The oldest due row by ORDER BY … LIMIT 1, not min(): an index walk that stops at the first match.
  // `turn`: the endpoint's place within its account; the page takes every account's first before
  // anyone's second, so it holds up to `limit` accounts however many endpoints one of them has due.
  const endpoints = (
    await sql<
      Omit<DeliveryCandidate, 'id' | 'kind' | 'payload' | 'attempts' | 'created_at'> & {
        turn: number;
        failing: number;
      }
    >`
    SELECT r.* FROM (
      SELECT e.account_id, e.channel_id, e.url, e.secret_enc, e.channel_kind, e.target_enc, e.oldest,
        CASE WHEN e.failures > 0 THEN 1 ELSE 0 END AS failing,
        ROW_NUMBER() OVER (PARTITION BY e.account_id ORDER BY e.failures, e.oldest, e.channel_id) AS turn
      FROM (
        SELECT w.account_id, 0 AS channel_id, w.url, w.secret_enc, NULL AS channel_kind, NULL AS target_enc,
          w.failures,
          (SELECT n.next_attempt_at FROM notifications n
            WHERE n.account_id = w.account_id AND ${due} AND ${webhookRows}
            ORDER BY n.next_attempt_at LIMIT 1) AS oldest
        FROM account_webhooks w
        UNION ALL
        SELECT c.account_id, c.id AS channel_id, c.target_hint AS url, NULL AS secret_enc, c.kind AS channel_kind,
          c.target_enc, c.failures,
          (SELECT n.next_attempt_at FROM notifications n
            WHERE n.channel_id = c.id AND ${due}
            ORDER BY n.next_attempt_at LIMIT 1) AS oldest
        FROM alert_channels c
      ) e
      WHERE e.oldest IS NOT NULL ${skip}
    ) r
    ORDER BY r.turn, r.failing, r.oldest, r.account_id, r.channel_id
    LIMIT ${opts.limit}`.execute(db)
  ).rows;
  if (endpoints.length === 0) return [];
  // Ordered by next_attempt_at alone (the index's order), so PostgreSQL stops after `perEndpoint`
  // rows instead of sorting an endpoint's whole backlog by (next_attempt_at, id).
  const rows = (
    await sql<
      Pick<DeliveryCandidate, 'id' | 'account_id' | 'channel_id' | 'kind' | 'payload' | 'attempts' | 'created_at'> & {
        next_attempt_at: number;
      }
    >`
    ${sql.join(
      endpoints.map(
        (e, i) => sql`SELECT * FROM (
          SELECT n.id, n.account_id, n.channel_id, n.kind, n.payload, n.attempts, n.created_at, n.next_attempt_at
          FROM notifications n
          WHERE ${Number(e.channel_id) === 0 ? sql`n.account_id = ${e.account_id} AND ${webhookRows}` : sql`n.channel_id = ${e.channel_id}`}
            AND ${due}
          ORDER BY n.next_attempt_at LIMIT ${opts.perEndpoint}) ${sql.raw(`t${i}`)}`,
      ),
      sql` UNION ALL `,
    )}`.execute(db)
  ).rows;
  const order = new Map(endpoints.map((e, i) => [`${e.account_id}:${e.channel_id}`, { e, i }]));
  const turns = new Map<string, number>();
  // Each row's place: its turn at its endpoint (oldest first), then its endpoint's place in the page.
  const placed = rows
    .map((r) => ({ ...r, id: Number(r.id), account_id: Number(r.account_id), channel_id: Number(r.channel_id) }))
    .sort((a, b) => Number(a.next_attempt_at) - Number(b.next_attempt_at) || a.id - b.id)
    .map((r) => {
      const key = `${r.account_id}:${r.channel_id}`;
      const turn = (turns.get(key) ?? 0) + 1;
      turns.set(key, turn);
      const { e, i } = order.get(key)!;
      return {
        row: {
          id: r.id,
          account_id: r.account_id,
          channel_id: r.channel_id,
          kind: r.kind,
          payload: r.payload,
          attempts: Number(r.attempts),
          created_at: Number(r.created_at),
          url: e.url,
          secret_enc: e.secret_enc,
          channel_kind: e.channel_kind,
          target_enc: e.target_enc,
        },
        turn,
        i,
      };
    })
    .sort((a, b) => a.turn - b.turn || a.i - b.i);
  // Round-robin across accounts: an account's k-th row goes after every account's (k-1)-th; among
  // accounts at the same k, in the order their first endpoint came in the page.
  const firstSeen = new Map<number, number>();
  const picks = new Map<number, number>();
  const candidates = placed.map((p) => {
    const account = p.row.account_id;
    if (!firstSeen.has(account)) firstSeen.set(account, p.i);
    const k = (picks.get(account) ?? 0) + 1;
    picks.set(account, k);
    return { ...p, k, first: firstSeen.get(account)! };
  });
  candidates.sort((a, b) => a.k - b.k || a.first - b.first);
  return candidates.slice(0, opts.limit).map((c) => c.row);
}

/**
 * Claims one notification until `until`; false when another process claimed it first (or is
 * claiming it right now), or when `perEndpoint` of the account's notifications are already claimed
 * (in flight) by any process. On PostgreSQL the row is locked with `FOR UPDATE SKIP LOCKED`, so a
 * console never waits on a row another console is claiming: it moves on to its next candidate
 * (docs/deploy.md, "Several consoles"). SQLite has one writer at a time and keeps the plain form.
 */
export async function claimNotification(
  db: Database,
  claim: { id: number; accountId: number; channelId: number; now: number; until: number; perEndpoint: number },
) {
  const inFlightBelowBound = sql<boolean>`(SELECT count(*) FROM notifications c
    WHERE c.account_id = ${claim.accountId} AND c.channel_id = ${claim.channelId}
      AND c.status = 'queued' AND c.locked_until > ${claim.now}) < ${claim.perEndpoint}`;
  const claimable = (eb: ExpressionBuilder<DB, 'notifications'>) =>
    eb.and([eb('id', '=', claim.id), eb('status', '=', 'queued'), eb('locked_until', '<=', claim.now)]);
  const result = await db
    .updateTable('notifications')
    .set({ locked_until: claim.until })
    .where((eb) =>
      isPostgres(db)
        ? eb('id', 'in', eb.selectFrom('notifications').select('id').where(claimable).forUpdate().skipLocked())
        : claimable(eb),
    )
    .where(inFlightBelowBound)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** A failing endpoint's other queued notifications wait with it, rather than each taking a turn to fail. */
export async function postponeQueue(db: Database, endpoint: EndpointKey, now: number, until: number) {
  await db
    .updateTable('notifications')
    .set({ next_attempt_at: until })
    .where('account_id', '=', endpoint.accountId)
    .where('channel_id', '=', endpoint.channelId)
    .where('status', '=', 'queued')
    .where('next_attempt_at', '<', until)
    .where('locked_until', '<=', now)
    .execute();
}

export async function recordEndpointResult(db: Database, accountId: number, url: string, at: number, ok: boolean) {
  await db
    .updateTable('account_webhooks')
    .set(ok ? { failures: 0, last_success_at: at } : (eb) => ({ failures: eb('failures', '+', 1) }))
    .where('account_id', '=', accountId)
    .where('url', '=', url)
    .execute();
}

/** Parks an account's queued notifications (its webhook was removed); claimed ones are parked when their attempt ends. */
export async function parkQueue(db: Database, accountId: number) {
  await db
    .updateTable('notifications')
    .set({ status: 'parked' })
    .where('account_id', '=', accountId)
    .where('channel_id', '=', 0)
    .where('status', '=', 'queued')
    .execute();
}

/**
 * Queues an account's parked notifications (and its waiting ones) again, due at once: a webhook was
 * set. Rows queued before `giveUpBefore` stay as they are (reconcileParked fails parked ones).
 */
export async function reviveQueue(db: Database, accountId: number, now: number, giveUpBefore: number) {
  const result = await db
    .updateTable('notifications')
    .set({ status: 'queued', next_attempt_at: now })
    .where('account_id', '=', accountId)
    .where('channel_id', '=', 0)
    .where('created_at', '>=', giveUpBefore)
    .where((eb) =>
      eb.or([eb('status', '=', 'parked'), eb.and([eb('status', '=', 'queued'), eb('locked_until', '<=', now)])]),
    )
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Repairs races between setting or removing a webhook and queueing: parked rows of accounts that
 * have a webhook are queued, queued rows of accounts without one are parked. Parked rows older
 * than `giveUpBefore` are marked failed, as queued ones are.
 */
export async function reconcileParked(db: Database, now: number, giveUpBefore: number) {
  const failed = await db
    .updateTable('notifications')
    .set({ status: 'failed' })
    .where('status', '=', 'parked')
    .where('created_at', '<', giveUpBefore)
    .executeTakeFirst();
  const revived = await db
    .updateTable('notifications')
    .set({ status: 'queued', next_attempt_at: now })
    .where('status', '=', 'parked')
    .where('channel_id', '=', 0)
    .where('account_id', 'in', (eb) => eb.selectFrom('account_webhooks').select('account_id'))
    .executeTakeFirst();
  const parked = await db
    .updateTable('notifications')
    .set({ status: 'parked' })
    .where('status', '=', 'queued')
    .where('channel_id', '=', 0)
    .where('locked_until', '<=', now)
    .where('account_id', 'not in', (eb) => eb.selectFrom('account_webhooks').select('account_id'))
    .executeTakeFirst();
  return {
    failed: Number(failed.numUpdatedRows),
    revived: Number(revived.numUpdatedRows),
    parked: Number(parked.numUpdatedRows),
  };
}

/** Writes an attempt's outcome while the claim `lease` (its locked_until) still holds; false when it no longer does. */
export async function finishAttempt(
  db: Database,
  id: number,
  lease: number,
  fields: Pick<NotificationsTable, 'status' | 'attempts' | 'next_attempt_at' | 'locked_until' | 'delivered_at'>,
) {
  const result = await db
    .updateTable('notifications')
    .set(fields)
    .where('id', '=', id)
    .where('locked_until', '=', lease)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function insertAttempt(db: Database, attempt: Insertable<NotificationAttemptsTable>) {
  await db.insertInto('notification_attempts').values(attempt).execute();
}

/** A page of the account's webhook delivery attempts, newest first, with how many there are in all. */
export async function listAttempts(db: Database, accountId: number, page: PageRequest) {
  const query = db
    .selectFrom('notification_attempts')
    .innerJoin('notifications', 'notifications.id', 'notification_attempts.notification_id')
    .select([
      'notification_attempts.id',
      'notification_attempts.notification_id',
      'notifications.kind',
      'notifications.status as status',
      'notification_attempts.at as created_at',
      'notification_attempts.url',
      'notification_attempts.status_code as response_status',
      'notification_attempts.error',
      'notification_attempts.duration_ms',
    ])
    .where('notification_attempts.account_id', '=', accountId)
    .where('notifications.channel_id', '=', 0);
  const { items, next_cursor, total } = await keysetPage(
    query,
    { key: 'notification_attempts.at', id: 'notification_attempts.id' },
    page,
    (d) => [d.created_at, d.id],
  );
  return { deliveries: items, next_cursor, total };
}
