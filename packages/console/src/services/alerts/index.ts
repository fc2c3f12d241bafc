import { createHash, randomBytes } from 'node:crypto';
import { EVENT_RULE_KINDS, lateAfterMs } from '@palisade/protocol';
import type { AlertChannelKind, AlertMetric, AlertRuleKind, Database } from '../../db/schema.js';
import { badRequest, conflict, notFound } from '../../errors.js';
import { type GuardedClient, OutboundError } from '../../outbound/guarded-client.js';
import {
  accountServerIds,
  accountServerTagRows,
  activeMutes,
  alertHistory,
  confirmChannel,
  deleteChannel,
  deleteMute,
  deleteRule,
  enabledRules,
  findChannel,
  findChannelByConfirmToken,
  findRule,
  insertChannel,
  insertRule,
  listChannels,
  listMutes,
  listRules,
  metricSamplesSince,
  saveStates,
  serversOfAccounts,
  setChannelConfirmToken,
  setChannelLastError,
  setMute,
  statesOfRules,
  unverifiedRunsSince,
  updateRule,
} from '../../repositories/alerts.repository.js';
import type { SecretBox } from '../../secrets.js';
import type { PageRequest } from '../../validation.js';
import type { AlertNotification, NotificationsService } from '../notifications.service.js';
import { serverTags } from '../servers/views.js';
import { benchmarkEvent, conditionOf, METRIC_GRACE_MS } from './evaluate.js';
import type { SilenceGrace } from './rounds.js';
import { channelView, ruleChannelIds, ruleCovers, ruleServerIds, ruleTags, ruleView } from './views.js';

export interface RuleInput {
  name: string;
  kind: AlertRuleKind;
  metric: AlertMetric | null;
  threshold: number | null;
  minutes: number;
  repeat_minutes: number;
  server_ids: number[] | null;
  /** Servers with any of these tags are in scope too; with server_ids both null: every server. */
  tags: string[] | null;
  channel_ids: number[];
  enabled: boolean;
}

export interface ChannelInput {
  name: string;
  kind: AlertChannelKind;
  url: string | null;
  email: string | null;
}

/** How long the link in a confirmation e-mail works. */
export const CONFIRMATION_TTL_MS = 7 * 24 * 60 * 60_000;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** Where a confirmation link points: the console's own page for the token (routes/alerts). */
export const confirmationLink = (consoleUrl: string, token: string) =>
  `${consoleUrl.replace(/\/$/, '')}/alerts/confirm?token=${token}`;

/** How far back a round looks for events (benchmark runs) that event rules have not told yet. */
const EVENT_LOOKBACK_MS = 24 * 60 * 60_000;
/** One rule on one server moving to a new state, with the notification it sends (if any). */
interface Transition {
  rule: { id: number; account_id: number; name: string; channels: number[] };
  server: { id: number; name: string };
  state: { firing: number; since: number; last_notified_at: number | null; value: number | null };
  notice: Pick<AlertNotification, 'kind' | 'title' | 'body'> | null;
}

/** Transitions written per transaction; its notifications go in the same one (at most this many per channel of a rule). */
const TRANSITION_BATCH = 500;

/** What one evaluation round did. */
export interface EvaluationRound {
  rules: number;
  fired: number;
  repeated: number;
  resolved: number;
}

/**
 * Alert rules, channels, mutes and history, and the evaluation round (docs/alerts.md). The round
 * runs under the housekeeping lease, so with several consoles one process evaluates at a time; each
 * transition's state and its notifications commit in one transaction, so a restart neither sends a
 * transition again nor loses one.
 */
export function createAlertsService(deps: {
  db: Database;
  clock: () => number;
  outbound: GuardedClient;
  secrets: SecretBox;
  notifications: NotificationsService;
  /** The check-in interval told to agents: `late` rules judge by it (lateAfterMs()). */
  checkinIntervalS: number;
}) {
  const { db, clock, outbound, secrets, notifications } = deps;
  const lateAfter = lateAfterMs(deps.checkinIntervalS);

  const accountServerTags = async (database: Database, accountId: number) =>
    (await accountServerTagRows(database, accountId)).map((r) => ({ id: Number(r.id), tags: serverTags(r.tags) }));

  async function checkRuleTargets(accountId: number, input: RuleInput) {
    const channels = new Set((await listChannels(db, accountId)).map((c) => Number(c.id)));
    const unknownChannel = input.channel_ids.find((id) => !channels.has(id));
    if (unknownChannel !== undefined) throw badRequest(`channel_ids: no channel ${unknownChannel} in this account`);
    if (input.server_ids !== null) {
      const servers = await accountServerIds(db, accountId);
      const unknownServer = input.server_ids.find((id) => !servers.has(id));
      if (unknownServer !== undefined) throw badRequest(`server_ids: no server ${unknownServer} in this account`);
    }
  }

  const ruleRow = (input: RuleInput) => ({
    name: input.name,
    kind: input.kind,
    metric: input.kind === 'metric' ? input.metric : null,
    threshold: input.kind === 'metric' || input.kind === 'score' ? input.threshold : null,
    minutes: input.kind === 'metric' || input.kind === 'unreachable' ? input.minutes : 0,
    // An event rule sends once per event: nothing lasts, so nothing repeats.
    repeat_minutes: EVENT_RULE_KINDS.includes(input.kind) ? 0 : input.repeat_minutes,
    server_ids: input.server_ids === null ? null : JSON.stringify([...new Set(input.server_ids)]),
    tags: input.tags === null || input.tags.length === 0 ? null : JSON.stringify(input.tags),
    channel_ids: JSON.stringify([...new Set(input.channel_ids)]),
    enabled: input.enabled ? 1 : 0,
  });

  /**
   * Sends the confirmation mail of an e-mail channel: a fixed text with a single-use link, nothing
   * the account wrote (not the channel's name), stored as its SHA-256. A failed send is kept on the channel.
   */
  async function sendConfirmation(id: number, to: string, consoleUrl: string) {
    const token = randomBytes(32).toString('base64url');
    const now = clock();
    await setChannelConfirmToken(db, id, sha256(token), now);
    const error = await notifications.sendConfirmation(to, confirmationLink(consoleUrl, token));
    await setChannelLastError(db, id, error === null ? null : `confirmation e-mail: ${error}`);
  }

  function refuseUnconfirmed(channel: { confirmed_at: number | null }) {
    if (channel.confirmed_at === null)
      throw conflict(
        'channel: waiting for confirmation; the recipient must open the link in the confirmation e-mail first (or send it again)',
      );
  }

  async function requireChannel(accountId: number, id: number) {
    const channel = await findChannel(db, accountId, id);
    if (!channel) throw notFound('channel');
    return channel;
  }

  /**
   * Moves rules on servers to their new states, BATCH at a time: each batch's states and their
   * notifications are one transaction of two statements (and a webhook lookup), so a thousand servers
   * going offline together cost a few round trips, not a few thousand (bench/alert-evaluation.mjs).
   */
  async function applyTransitions(transitions: Transition[], now: number) {
    for (let start = 0; start < transitions.length; start += TRANSITION_BATCH) {
      const batch = transitions.slice(start, start + TRANSITION_BATCH);
      await db.transaction().execute(async (trx) => {
        // One row per rule and server: several unverified runs of one server in a round each send
        // a notification, and the state keeps the last (an upsert may not touch a row twice).
        const states = new Map(
          batch.map((t) => [`${t.rule.id}:${t.server.id}`, { rule_id: t.rule.id, server_id: t.server.id, ...t.state }]),
        );
        await saveStates(trx, [...states.values()]);
        await notifications.enqueueAlerts(
          trx,
          batch.flatMap(({ rule, server, state, notice }) =>
            notice === null
              ? []
              : rule.channels.map((channelId) => ({
                  accountId: rule.account_id,
                  channelId,
                  notification: {
                    ...notice,
                    rule_id: rule.id,
                    rule: rule.name,
                    server_id: server.id,
                    server: server.name,
                    value: state.value,
                    at: now,
                  },
                })),
          ),
        );
      });
    }
  }

  return {
    async listRules(accountId: number) {
      return (await listRules(db, accountId)).map(ruleView);
    },

    async createRule(accountId: number, input: RuleInput) {
      await checkRuleTargets(accountId, input);
      const now = clock();
      const id = await insertRule(db, { account_id: accountId, created_at: now, active_since: now, ...ruleRow(input) });
      return ruleView((await findRule(db, accountId, id))!);
    },

    /**
     * Replaces a rule. Disabling it, or changing what it fires on, forgets its states (so nothing
     * "resolved" is sent, and turning it on again starts fresh); servers taken out of its scope are
     * forgotten likewise (docs/alerts.md, "Timing").
     */
    async updateRule(accountId: number, id: number, input: RuleInput) {
      const before = await findRule(db, accountId, id);
      if (!before) throw notFound('rule');
      await checkRuleTargets(accountId, input);
      const row = ruleRow(input);
      // A new kind or metric is another alert: its states are forgotten. A new threshold or minutes is
      // the same alert at another level: the next round judges a firing one by it, and sends "resolved"
      // when it no longer holds, so those who were told it started are told it ended.
      const condition = (r: Pick<typeof row, 'kind' | 'metric'>) => JSON.stringify([r.kind, r.metric]);
      const restart = !input.enabled || Number(before.enabled) !== 1 || condition(before) !== condition(row);
      // The servers it covers after the change (null: all), so those it no longer covers are forgotten.
      const after = { server_ids: row.server_ids, tags: row.tags };
      const scope =
        after.server_ids === null && after.tags === null
          ? null
          : (await accountServerTags(db, accountId)).filter((s) => ruleCovers(after, s)).map((s) => s.id);
      const scopeChanged =
        JSON.stringify([ruleServerIds(after), ruleTags(after)]) !==
        JSON.stringify([ruleServerIds(before), ruleTags(before)]);
      await updateRule(
        db,
        accountId,
        id,
        { ...row, ...(restart || scopeChanged ? { active_since: clock() } : {}) },
        restart ? [] : scope,
      );
      return ruleView((await findRule(db, accountId, id))!);
    },

    async removeRule(accountId: number, id: number) {
      if (!(await deleteRule(db, accountId, id))) throw notFound('rule');
    },

    async listChannels(accountId: number) {
      return (await listChannels(db, accountId)).map(channelView);
    },

    /**
     * Adds a channel; a Slack or Discord URL must pass the console's target policy (docs/fleet.md), as
     * at every delivery. An e-mail channel waits for its recipient: it is sent one confirmation mail
     * (a link to `consoleUrl`) and receives nothing else until the link is opened (docs/alerts.md).
     */
    async createChannel(accountId: number, input: ChannelInput, consoleUrl: string) {
      let target: string | null = null;
      let hint = 'the account webhook';
      if (input.kind === 'slack' || input.kind === 'discord') {
        if (!input.url) throw badRequest(`url: is required for a ${input.kind} channel`);
        try {
          await outbound.checkUrl(input.url);
        } catch (err) {
          if (err instanceof OutboundError) throw badRequest(`url: ${err.message}`);
          throw err;
        }
        target = input.url;
        hint = new URL(input.url).host;
      } else if (input.kind === 'email') {
        if (!input.email) throw badRequest('email: is required for an email channel');
        target = input.email;
        hint = input.email;
      }
      const now = clock();
      const id = await insertChannel(db, {
        account_id: accountId,
        name: input.name,
        kind: input.kind,
        target_enc: target === null ? null : secrets.seal(target),
        target_hint: hint,
        last_success_at: null,
        last_error: null,
        created_at: now,
        confirmed_at: input.kind === 'email' ? null : now,
        confirm_token_hash: null,
        confirm_sent_at: null,
      });
      if (input.kind === 'email') await sendConfirmation(id, target!, consoleUrl);
      return channelView((await findChannel(db, accountId, id))!);
    },

    /** 404 for another account's channel, 409 while it waits for confirmation: before a test is counted. */
    async requireChannelReady(accountId: number, id: number) {
      refuseUnconfirmed(await requireChannel(accountId, id));
    },

    /** 404 for another account's channel, 409 unless it is an e-mail channel waiting for confirmation. */
    async requireChannelWaiting(accountId: number, id: number) {
      const channel = await requireChannel(accountId, id);
      if (channel.kind !== 'email') throw conflict('channel: only e-mail channels are confirmed');
      if (channel.confirmed_at !== null) throw conflict('channel: already confirmed');
    },

    /** A new confirmation mail for an e-mail channel still waiting (the earlier link stops working). */
    async resendConfirmation(accountId: number, id: number, consoleUrl: string) {
      const channel = await requireChannel(accountId, id);
      if (channel.kind !== 'email') throw conflict('channel: only e-mail channels are confirmed');
      if (channel.confirmed_at !== null) throw conflict('channel: already confirmed');
      await sendConfirmation(id, secrets.open(channel.target_enc!), consoleUrl);
      return channelView((await findChannel(db, accountId, id))!);
    },

    /** Whether a confirmation token is one waiting to be used: the address it confirms, or null. */
    async confirmationTarget(token: string): Promise<string | null> {
      const channel = await findChannelByConfirmToken(db, sha256(token), clock() - CONFIRMATION_TTL_MS);
      return channel ? channel.target_hint : null;
    },

    /** Uses a confirmation token: the address it confirmed, or a 400 naming `token`. */
    async confirm(token: string): Promise<string> {
      const now = clock();
      const confirmed = await confirmChannel(db, sha256(token), now, now - CONFIRMATION_TTL_MS);
      if (!confirmed) throw badRequest('token: unknown, expired or already used; ask for a new confirmation e-mail');
      return confirmed.target_hint;
    },

    async removeChannel(accountId: number, id: number) {
      if (!(await deleteChannel(db, accountId, id))) throw notFound('channel');
    },

    /** "Send a test": one delivery now, its outcome answered and kept on the channel. */
    async testChannel(accountId: number, id: number) {
      const channel = await requireChannel(accountId, id);
      refuseUnconfirmed(channel);
      const now = clock();
      const result = await notifications.sendTest(
        accountId,
        {
          id: Number(channel.id),
          kind: channel.kind,
          target_enc: channel.target_enc,
          target_hint: channel.target_hint,
        },
        {
          kind: 'alert.test',
          title: `Palisade test notification for ${channel.name}`,
          body: 'If you can read this, alerts reach this channel.',
          rule_id: null,
          rule: null,
          server_id: null,
          server: null,
          value: null,
          at: now,
        },
      );
      return { ...result, channel: channelView((await findChannel(db, accountId, id))!) };
    },

    /** A page of the alert history, newest first (docs/alerts.md, "History"), with the cursor of the next. */
    async history(accountId: number, page: PageRequest) {
      const { items, next_cursor, total } = await alertHistory(db, accountId, page);
      const history = items.map((r) => {
        const n = JSON.parse(r.payload) as AlertNotification;
        return {
          id: Number(r.id),
          kind: r.kind,
          title: n.title,
          body: n.body,
          rule_id: n.rule_id,
          server_id: n.server_id,
          channel_id: Number(r.channel_id),
          channel: Number(r.channel_id) === 0 ? 'account webhook' : (r.channel_name ?? 'deleted channel'),
          channel_kind: Number(r.channel_id) === 0 ? 'webhook' : r.channel_kind,
          status: r.status,
          attempts: Number(r.attempts),
          created_at: Number(r.created_at),
          delivered_at: r.delivered_at === null ? null : Number(r.delivered_at),
          last_error: r.last_error ?? null,
        };
      });
      return { history, next_cursor, total };
    },

    async listMutes(accountId: number) {
      return (await listMutes(db, accountId, clock())).map((m) => ({
        server_id: Number(m.server_id),
        until: Number(m.until),
      }));
    },

    /** Mutes a server's alerts until `until` (maintenance): states still change, nothing is sent. */
    async muteServer(accountId: number, serverId: number, until: number) {
      if (!(await accountServerIds(db, accountId)).has(serverId)) throw notFound('server');
      if (until <= clock()) throw badRequest('until: must be in the future');
      await setMute(db, { server_id: serverId, account_id: accountId, until });
      return { server_id: serverId, until };
    },

    async unmuteServer(accountId: number, serverId: number) {
      if (!(await deleteMute(db, accountId, serverId))) throw notFound('mute');
    },

    /**
     * One evaluation round over every enabled rule (docs/alerts.md, "Timing"): a condition that
     * starts sends one `alert.fired`, one that ends sends one `alert.resolved`, a long one repeats
     * every `repeat_minutes`; a muted server's transitions are recorded and not sent, and a firing
     * alert not yet sent goes out when the mute ends.
     */
    async evaluate(grace?: SilenceGrace): Promise<EvaluationRound> {
      const now = clock();
      const round: EvaluationRound = { rules: 0, fired: 0, repeated: 0, resolved: 0 };
      const rules = await enabledRules(db);
      if (rules.length === 0) return round;
      const accountIds = [...new Set(rules.map((r) => Number(r.account_id)))];
      const servers = await serversOfAccounts(db, accountIds);
      const channelsByAccount = new Map<number, Map<number, AlertChannelKind>>();
      for (const accountId of accountIds) {
        channelsByAccount.set(
          accountId,
          // A channel waiting for confirmation receives nothing (docs/alerts.md, "E-mail channels").
          new Map(
            (await listChannels(db, accountId))
              .filter((c) => c.confirmed_at !== null)
              .map((c) => [Number(c.id), c.kind]),
          ),
        );
      }
      const states = new Map(
        (
          await statesOfRules(
            db,
            rules.map((r) => Number(r.id)),
          )
        ).map((s) => [`${s.rule_id}:${s.server_id}`, s]),
      );
      const mutes = await activeMutes(db, now);
      // Samples for metric rules, fetched once per round for every server they may read.
      const longest = Math.max(-1, ...rules.filter((r) => r.kind === 'metric').map((r) => Number(r.minutes)));
      const samples =
        longest < 0
          ? new Map<number, never[]>()
          : await metricSamplesSince(
              db,
              servers.map((s) => Number(s.id)),
              now - longest * 60_000 - METRIC_GRACE_MS,
            );
      // Unverified benchmark runs for `benchmark_unverified` rules, looked for up to a day back.
      const runs = rules.some((r) => r.kind === 'benchmark_unverified')
        ? await unverifiedRunsSince(
            db,
            servers.map((s) => Number(s.id)),
            now - EVENT_LOOKBACK_MS,
          )
        : new Map<number, never[]>();
      const transitions: Transition[] = [];
      const transition = (
        rule: Transition['rule'],
        server: Transition['server'],
        state: Transition['state'],
        notice: Transition['notice'],
      ) => transitions.push({ rule, server, state, notice });
      for (const rule of rules) {
        round.rules += 1;
        const accountId = Number(rule.account_id);
        const known = channelsByAccount.get(accountId)!;
        // A `webhook` channel is the account's signed webhook: channel 0 in the outbox.
        const channels = [
          ...new Set(
            ruleChannelIds(rule)
              .filter((id) => known.has(id))
              .map((id) => (known.get(id) === 'webhook' ? 0 : id)),
          ),
        ];
        const target = { id: Number(rule.id), account_id: accountId, name: rule.name, channels };
        for (const server of servers) {
          if (Number(server.account_id) !== accountId) continue;
          if (!ruleCovers(rule, { id: Number(server.id), tags: serverTags(server.tags) })) continue;
          if (rule.kind === 'benchmark_unverified') {
            // One notification per run, oldest first; the state keeps the last run told about
            // (`since` its finish, `value` its id), so a run is never sent twice.
            const state = states.get(`${rule.id}:${server.id}`);
            const mark = state
              ? [Number(state.since), Number(state.value ?? 0)]
              : [Number(rule.active_since ?? rule.created_at), 0];
            const muted = mutes.has(Number(server.id));
            for (const run of runs.get(Number(server.id)) ?? []) {
              if (run.finished_at < mark[0]! || (run.finished_at === mark[0] && run.id <= mark[1]!)) continue;
              transition(
                target,
                { id: Number(server.id), name: server.name },
                { firing: 0, since: run.finished_at, last_notified_at: muted ? null : now, value: run.id },
                muted ? null : { kind: 'alert.fired', ...benchmarkEvent(server, run) },
              );
              if (!muted) round.fired += 1;
            }
            continue;
          }
          const condition = conditionOf(rule, server, now, samples.get(Number(server.id)) ?? [], lateAfter, grace);
          if (!condition) continue;
          const state = states.get(`${rule.id}:${server.id}`);
          const firing = state ? Number(state.firing) === 1 : false;
          const notified = state?.last_notified_at == null ? null : Number(state.last_notified_at);
          const muted = mutes.has(Number(server.id));
          const where = { id: Number(server.id), name: server.name };
          const text = { title: condition.title, body: condition.body };
          if (condition.active && !firing) {
            transition(
              target,
              where,
              { firing: 1, since: now, last_notified_at: muted ? null : now, value: condition.value },
              muted ? null : { kind: 'alert.fired', ...text },
            );
            if (!muted) round.fired += 1;
          } else if (condition.active && !muted && notified === null) {
            transition(
              target,
              where,
              { firing: 1, since: Number(state!.since), last_notified_at: now, value: condition.value },
              { kind: 'alert.fired', ...text },
            );
            round.fired += 1;
          } else if (
            condition.active &&
            !muted &&
            Number(rule.repeat_minutes) > 0 &&
            now - notified! >= Number(rule.repeat_minutes) * 60_000
          ) {
            transition(
              target,
              where,
              { firing: 1, since: Number(state!.since), last_notified_at: now, value: condition.value },
              { kind: 'alert.repeat', title: `Still: ${condition.title}`, body: condition.body },
            );
            round.repeated += 1;
          } else if (!condition.active && firing) {
            const send = !muted && notified !== null;
            transition(
              target,
              where,
              { firing: 0, since: now, last_notified_at: notified, value: condition.value },
              send ? { kind: 'alert.resolved', ...text } : null,
            );
            if (send) round.resolved += 1;
          }
        }
      }
      await applyTransitions(transitions, now);
      return round;
    },
  };
}

export type AlertsService = ReturnType<typeof createAlertsService>;
