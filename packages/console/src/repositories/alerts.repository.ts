import type { Insertable, Updateable } from 'kysely';
import type { AlertChannelsTable, AlertRulesTable, AlertStatesTable, Database, ServerRow } from '../db/schema.js';
import type { PageRequest } from '../validation.js';
import { keysetPage } from './paging.js';

/** What an alert mail words its value with: the rule's kind and metric, or null when the rule is gone. */
export async function findRuleWording(db: Database, ruleId: number) {
  return (
    (await db.selectFrom('alert_rules').select(['kind', 'metric']).where('id', '=', ruleId).executeTakeFirst()) ?? null
  );
}

export async function listChannels(db: Database, accountId: number) {
  return db.selectFrom('alert_channels').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
}

export async function findChannel(db: Database, accountId: number, id: number) {
  return db
    .selectFrom('alert_channels')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function insertChannel(db: Database, channel: Insertable<AlertChannelsTable>) {
  const row = await db.insertInto('alert_channels').values(channel).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

/** Removes a channel; its undelivered notifications fail (their endpoint is gone). */
export async function deleteChannel(db: Database, accountId: number, id: number) {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .deleteFrom('alert_channels')
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (Number(result.numDeletedRows) === 0) return false;
    await trx
      .updateTable('notifications')
      .set({ status: 'failed' })
      .where('channel_id', '=', id)
      .where('status', 'in', ['queued', 'parked'])
      .execute();
    return true;
  });
}

/** A new confirmation token (its hash) for a channel waiting for confirmation. */
export async function setChannelConfirmToken(db: Database, id: number, tokenHash: string, at: number) {
  await db
    .updateTable('alert_channels')
    .set({ confirm_token_hash: tokenHash, confirm_sent_at: at })
    .where('id', '=', id)
    .where('confirmed_at', 'is', null)
    .execute();
}

/** The channel's last error alone (a confirmation mail's outcome): not a delivery, so no failure is counted. */
export async function setChannelLastError(db: Database, id: number, error: string | null) {
  await db.updateTable('alert_channels').set({ last_error: error }).where('id', '=', id).execute();
}

/** The channel waiting for the token with this hash, if the token was sent after `sentAfter`. */
export async function findChannelByConfirmToken(db: Database, tokenHash: string, sentAfter: number) {
  return db
    .selectFrom('alert_channels')
    .selectAll()
    .where('confirm_token_hash', '=', tokenHash)
    .where('confirmed_at', 'is', null)
    .where('confirm_sent_at', '>', sentAfter)
    .executeTakeFirst();
}

/** Uses a confirmation token up: the channel is confirmed once, and the token never works again. */
export async function confirmChannel(db: Database, tokenHash: string, at: number, sentAfter: number) {
  const result = await db
    .updateTable('alert_channels')
    .set({ confirmed_at: at, confirm_token_hash: null })
    .where('confirm_token_hash', '=', tokenHash)
    .where('confirmed_at', 'is', null)
    .where('confirm_sent_at', '>', sentAfter)
    .returning(['id', 'target_hint'])
    .executeTakeFirst();
  return result ? { id: Number(result.id), target_hint: result.target_hint } : null;
}

/** A delivery's outcome on the channel: failures in a row, the last success, the last error (shown on the settings page). */
export async function recordChannelResult(db: Database, id: number, at: number, error: string | null) {
  await db
    .updateTable('alert_channels')
    .set(
      error === null
        ? { failures: 0, last_success_at: at, last_error: null }
        : (eb) => ({ failures: eb('failures', '+', 1), last_error: error }),
    )
    .where('id', '=', id)
    .execute();
}

export async function listRules(db: Database, accountId: number) {
  return db.selectFrom('alert_rules').selectAll().where('account_id', '=', accountId).orderBy('id').execute();
}

export async function findRule(db: Database, accountId: number, id: number) {
  return db
    .selectFrom('alert_rules')
    .selectAll()
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
}

export async function insertRule(db: Database, rule: Insertable<AlertRulesTable>) {
  const row = await db.insertInto('alert_rules').values(rule).returning('id').executeTakeFirstOrThrow();
  return Number(row.id);
}

/**
 * Changes a rule and, in the same transaction, forgets its states on the servers it no longer
 * watches: every server (`keepServerIds` empty) or those outside `keepServerIds` (null: keep all).
 */
export async function updateRule(
  db: Database,
  accountId: number,
  id: number,
  fields: Updateable<AlertRulesTable>,
  keepServerIds: number[] | null,
) {
  return db.transaction().execute(async (trx) => {
    const result = await trx
      .updateTable('alert_rules')
      .set(fields)
      .where('id', '=', id)
      .where('account_id', '=', accountId)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return false;
    if (keepServerIds !== null) {
      let forget = trx.deleteFrom('alert_states').where('rule_id', '=', id);
      if (keepServerIds.length > 0) forget = forget.where('server_id', 'not in', keepServerIds);
      await forget.execute();
    }
    return true;
  });
}

export async function deleteRule(db: Database, accountId: number, id: number) {
  const result = await db
    .deleteFrom('alert_rules')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Every enabled rule of every account, for one evaluation round. */
export async function enabledRules(db: Database) {
  return db
    .selectFrom('alert_rules')
    .selectAll()
    .where('enabled', '=', 1)
    .orderBy('account_id')
    .orderBy('id')
    .execute();
}

export type AlertServerRow = ServerRow;

/** The servers of the given accounts, for one evaluation round. */
export async function serversOfAccounts(db: Database, accountIds: number[]) {
  if (accountIds.length === 0) return [];
  return db.selectFrom('servers').selectAll().where('account_id', 'in', accountIds).orderBy('id').execute();
}

export async function accountServerIds(db: Database, accountId: number) {
  const rows = await db.selectFrom('servers').select('id').where('account_id', '=', accountId).execute();
  return new Set(rows.map((r) => Number(r.id)));
}

/** Each server of the account with its tags column (read by services/servers/views.ts serverTags). */
export async function accountServerTagRows(db: Database, accountId: number) {
  return db.selectFrom('servers').select(['id', 'tags']).where('account_id', '=', accountId).execute();
}

export async function statesOfRules(db: Database, ruleIds: number[]) {
  if (ruleIds.length === 0) return [];
  return db.selectFrom('alert_states').selectAll().where('rule_id', 'in', ruleIds).execute();
}

/** Writes many rule/server states in one statement (an evaluation round's batch). */
export async function saveStates(db: Database, states: AlertStatesTable[]) {
  if (states.length === 0) return;
  await db
    .insertInto('alert_states')
    .values(states)
    .onConflict((oc) =>
      oc.columns(['rule_id', 'server_id']).doUpdateSet((eb) => ({
        firing: eb.ref('excluded.firing'),
        since: eb.ref('excluded.since'),
        last_notified_at: eb.ref('excluded.last_notified_at'),
        value: eb.ref('excluded.value'),
      })),
    )
    .execute();
}

/**
 * Rows of the given servers, fetched 500 servers a query, grouped by server in the order the query
 * returns them.
 */
async function groupByServer<R extends { server_id: number }, T>(
  serverIds: number[],
  query: (ids: number[]) => Promise<R[]>,
  map: (row: R) => T,
) {
  const byServer = new Map<number, T[]>();
  for (let i = 0; i < serverIds.length; i += 500) {
    for (const r of await query(serverIds.slice(i, i + 500))) {
      const id = Number(r.server_id);
      const list = byServer.get(id) ?? [];
      byServer.set(id, list);
      list.push(map(r));
    }
  }
  return byServer;
}

/** One benchmark run that came out unverified, as a `benchmark_unverified` rule tells it. */
export interface UnverifiedRun {
  id: number;
  server_id: number;
  label: string;
  score_total: number | null;
  checks: string;
  finished_at: number;
}

/**
 * The benchmark runs of the given servers that finished as done but unverified at or after `since`,
 * oldest first, for `benchmark_unverified` rules.
 */
export async function unverifiedRunsSince(db: Database, serverIds: number[], since: number) {
  return groupByServer(
    serverIds,
    (ids) =>
      db
        .selectFrom('benchmark_runs')
        .select(['id', 'server_id', 'label', 'score_total', 'checks', 'finished_at'])
        .where('server_id', 'in', ids)
        .where('status', '=', 'done')
        .where('verified', '=', 0)
        .where('finished_at', '>=', since)
        .orderBy('finished_at')
        .orderBy('id')
        .execute(),
    (r): UnverifiedRun => ({
      id: Number(r.id),
      server_id: Number(r.server_id),
      label: r.label,
      score_total: r.score_total === null ? null : Number(r.score_total),
      checks: r.checks,
      finished_at: Number(r.finished_at),
    }),
  );
}

export interface MetricSample {
  ts: number;
  cpu_pct: number;
  mem_used_mb: number;
  mem_total_mb: number;
  disk_used_pct: number;
  load1: number;
}

/**
 * The raw samples of the given servers taken at or after `since`, newest first per server, with the
 * columns rules read: one query per 500 servers rather than one per server and rule.
 */
export async function metricSamplesSince(db: Database, serverIds: number[], since: number) {
  return groupByServer(
    serverIds,
    (ids) =>
      db
        .selectFrom('samples')
        .select(['server_id', 'ts', 'cpu_pct', 'mem_used_mb', 'mem_total_mb', 'disk_used_pct', 'load1'])
        .where('server_id', 'in', ids)
        .where('resolution', '=', 'raw')
        .where('ts', '>=', since)
        .orderBy('server_id')
        .orderBy('ts', 'desc')
        .execute(),
    (r): MetricSample => ({
      ts: Number(r.ts),
      cpu_pct: Number(r.cpu_pct),
      mem_used_mb: Number(r.mem_used_mb),
      mem_total_mb: Number(r.mem_total_mb),
      disk_used_pct: Number(r.disk_used_pct),
      load1: Number(r.load1),
    }),
  );
}

export async function listMutes(db: Database, accountId: number, now: number) {
  return db
    .selectFrom('alert_mutes')
    .selectAll()
    .where('account_id', '=', accountId)
    .where('until', '>', now)
    .orderBy('server_id')
    .execute();
}

export async function activeMutes(db: Database, now: number) {
  const rows = await db.selectFrom('alert_mutes').select(['server_id', 'until']).where('until', '>', now).execute();
  return new Map(rows.map((r) => [Number(r.server_id), Number(r.until)]));
}

export async function setMute(db: Database, mute: { server_id: number; account_id: number; until: number }) {
  await db
    .insertInto('alert_mutes')
    .values(mute)
    .onConflict((oc) => oc.column('server_id').doUpdateSet({ until: mute.until }))
    .execute();
}

export async function deleteMute(db: Database, accountId: number, serverId: number) {
  const result = await db
    .deleteFrom('alert_mutes')
    .where('server_id', '=', serverId)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/**
 * Alert history from the outbox and its delivery log: each alert notification with its channel,
 * status, attempts and the last attempt's error, newest first.
 */
export async function alertHistory(db: Database, accountId: number, page: PageRequest) {
  const query = db
    .selectFrom('notifications as n')
    .leftJoin('alert_channels as c', 'c.id', 'n.channel_id')
    .select((eb) => [
      'n.id',
      'n.kind',
      'n.payload',
      'n.status',
      'n.attempts',
      'n.created_at',
      'n.delivered_at',
      'n.channel_id',
      'c.name as channel_name',
      'c.kind as channel_kind',
      eb
        .selectFrom('notification_attempts as a')
        .select('a.error')
        .whereRef('a.notification_id', '=', 'n.id')
        .orderBy('a.id', 'desc')
        .limit(1)
        .as('last_error'),
    ])
    .where('n.account_id', '=', accountId)
    .where('n.kind', 'like', 'alert.%');
  // Newest first by (created_at, id), walked on the account's history index (migration 0025).
  return keysetPage(query, { key: 'n.created_at', id: 'n.id' }, page, (r) => [Number(r.created_at), Number(r.id)]);
}
