import type { AlertChannelKind, Database, ServerRow } from '../../db/schema.js';
import {
  activeMutes,
  enabledRules,
  listChannels,
  metricSamplesSince,
  saveStates,
  serversOfAccounts,
  statesOfRules,
  type UnverifiedRun,
  unverifiedRunsSince,
} from '../../repositories/alerts.repository.js';
import type { AlertNotification, NotificationsService } from '../notifications.service.js';
import { serverTags } from '../servers/views.js';
import { benchmarkEvent, type Condition, conditionOf, METRIC_GRACE_MS } from './conditions.js';
import type { SilenceGrace } from './rounds.js';
import { type RuleRow, ruleChannelIds, ruleCovers } from './views.js';

/** How far back a round looks for events (benchmark runs) that event rules have not told yet. */
const EVENT_LOOKBACK_MS = 24 * 60 * 60_000;
/** Transitions written per transaction; its notifications go in the same one (at most this many per channel of a rule). */
const TRANSITION_BATCH = 500;

/** What one evaluation round did. */
export interface EvaluationRound {
  rules: number;
  fired: number;
  repeated: number;
  resolved: number;
}

/** A rule's state on one server, as stored. */
type StateRow = Awaited<ReturnType<typeof statesOfRules>>[number];

/** One rule on one server moving to a new state, with the notification it sends (if any). */
interface Transition {
  rule: { id: number; account_id: number; name: string; channels: number[] };
  server: { id: number; name: string };
  state: { firing: number; since: number; last_notified_at: number | null; value: number | null };
  notice: Pick<AlertNotification, 'kind' | 'title' | 'body'> | null;
}
type Move = Pick<Transition, 'state' | 'notice'>;

/** Everything a round reads once for all its rules: servers, confirmed channels, states, mutes, samples, runs. */
async function readRound(db: Database, rules: RuleRow[], now: number) {
  const accountIds = [...new Set(rules.map((r) => Number(r.account_id)))];
  const servers = await serversOfAccounts(db, accountIds);
  const serverIds = servers.map((s) => Number(s.id));
  const channels = new Map<number, Map<number, AlertChannelKind>>();
  for (const accountId of accountIds) {
    // A channel waiting for confirmation receives nothing (docs/alerts.md, "E-mail channels").
    const confirmed = (await listChannels(db, accountId)).filter((c) => c.confirmed_at !== null);
    channels.set(accountId, new Map(confirmed.map((c) => [Number(c.id), c.kind])));
  }
  const stateRows = await statesOfRules(
    db,
    rules.map((r) => Number(r.id)),
  );
  const states = new Map(stateRows.map((s) => [`${s.rule_id}:${s.server_id}`, s]));
  const mutes = await activeMutes(db, now);
  // Samples for metric rules, fetched once per round for every server they may read.
  const longest = Math.max(-1, ...rules.filter((r) => r.kind === 'metric').map((r) => Number(r.minutes)));
  const samples =
    longest < 0
      ? new Map<number, never[]>()
      : await metricSamplesSince(db, serverIds, now - longest * 60_000 - METRIC_GRACE_MS);
  // Unverified benchmark runs for `benchmark_unverified` rules, looked for up to a day back.
  const runs = rules.some((r) => r.kind === 'benchmark_unverified')
    ? await unverifiedRunsSince(db, serverIds, now - EVENT_LOOKBACK_MS)
    : new Map<number, never[]>();
  return { servers, channels, states, mutes, samples, runs };
}

/** The rule as its transitions carry it: the confirmed channels it sends to, a `webhook` channel being the account's signed webhook (channel 0 in the outbox). */
function ruleTarget(rule: RuleRow, known: Map<number, AlertChannelKind>): Transition['rule'] {
  const channels = ruleChannelIds(rule)
    .filter((id) => known.has(id))
    .map((id) => (known.get(id) === 'webhook' ? 0 : id));
  return {
    id: Number(rule.id),
    account_id: Number(rule.account_id),
    name: rule.name,
    channels: [...new Set(channels)],
  };
}

/**
 * A `benchmark_unverified` rule on one server: one notification per run, oldest first; the state
 * keeps the last run told about (`since` its finish, `value` its id), so a run is never sent twice.
 */
function runMoves(
  rule: RuleRow,
  server: ServerRow,
  state: StateRow | undefined,
  runs: UnverifiedRun[],
  muted: boolean,
  now: number,
): Move[] {
  const [since, told] = state
    ? [Number(state.since), Number(state.value ?? 0)]
    : [Number(rule.active_since ?? rule.created_at), 0];
  return runs
    .filter((run) => run.finished_at > since || (run.finished_at === since && run.id > told))
    .map((run) => ({
      state: { firing: 0, since: run.finished_at, last_notified_at: muted ? null : now, value: run.id },
      notice: muted ? null : { kind: 'alert.fired', ...benchmarkEvent(server, run) },
    }));
}

/**
 * A condition's move from the rule's state on a server: it starts (fired), is told late after a
 * mute (fired), lasts past `repeat_minutes` (repeat) or ends (resolved, when it was told); a muted
 * server's moves are recorded and not sent. Null: nothing changes.
 */
function conditionMove(
  rule: RuleRow,
  condition: Condition,
  state: StateRow | undefined,
  muted: boolean,
  now: number,
): Move | null {
  const firing = state ? Number(state.firing) === 1 : false;
  const notified = state?.last_notified_at == null ? null : Number(state.last_notified_at);
  const { value } = condition;
  const text = { title: condition.title, body: condition.body };
  if (condition.active && !firing)
    return {
      state: { firing: 1, since: now, last_notified_at: muted ? null : now, value },
      notice: muted ? null : { kind: 'alert.fired', ...text },
    };
  if (!condition.active) {
    if (!firing) return null;
    const send = !muted && notified !== null;
    return {
      state: { firing: 0, since: now, last_notified_at: notified, value },
      notice: send ? { kind: 'alert.resolved', ...text } : null,
    };
  }
  if (muted) return null;
  const still = { firing: 1, since: Number(state!.since), last_notified_at: now, value };
  if (notified === null) return { state: still, notice: { kind: 'alert.fired', ...text } };
  const repeatMs = Number(rule.repeat_minutes) * 60_000;
  if (repeatMs > 0 && now - notified >= repeatMs)
    return { state: still, notice: { kind: 'alert.repeat', title: `Still: ${condition.title}`, body: condition.body } };
  return null;
}

/** The round's figures: rules looked at, and the notifications of each kind it sent. */
function tally(rules: number, transitions: Transition[]): EvaluationRound {
  const sent = (kind: AlertNotification['kind']) => transitions.filter((t) => t.notice?.kind === kind).length;
  return { rules, fired: sent('alert.fired'), repeated: sent('alert.repeat'), resolved: sent('alert.resolved') };
}

/**
 * The evaluation round (docs/alerts.md, "Timing"). It runs under the housekeeping lease, so with
 * several consoles one process evaluates at a time; each transition's state and its notifications
 * commit in one transaction, so a restart neither sends a transition again nor loses one.
 */
export function createEvaluation(deps: {
  db: Database;
  clock: () => number;
  notifications: Pick<NotificationsService, 'enqueueAlerts'>;
  /** When a server is late (lateAfterMs() of the check-in interval): `late` rules. */
  lateAfter: number;
}) {
  const { db, clock, notifications, lateAfter } = deps;

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

  /**
   * One round over every enabled rule: a condition that starts sends one `alert.fired`, one that
   * ends sends one `alert.resolved`, a long one repeats every `repeat_minutes`; a muted server's
   * transitions are recorded and not sent, and a firing alert not yet sent goes out when the mute ends.
   */
  return async function evaluate(grace?: SilenceGrace): Promise<EvaluationRound> {
    const now = clock();
    const rules = await enabledRules(db);
    if (rules.length === 0) return tally(0, []);
    const round = await readRound(db, rules, now);
    const transitions: Transition[] = [];
    for (const rule of rules) {
      const target = ruleTarget(rule, round.channels.get(Number(rule.account_id))!);
      for (const server of round.servers) {
        const id = Number(server.id);
        if (Number(server.account_id) !== target.account_id) continue;
        if (!ruleCovers(rule, { id, tags: serverTags(server.tags) })) continue;
        const state = round.states.get(`${rule.id}:${server.id}`);
        const muted = round.mutes.has(id);
        let moves: Move[];
        if (rule.kind === 'benchmark_unverified')
          moves = runMoves(rule, server, state, round.runs.get(id) ?? [], muted, now);
        else {
          const condition = conditionOf(rule, server, now, round.samples.get(id) ?? [], lateAfter, grace);
          const move = condition && conditionMove(rule, condition, state, muted, now);
          moves = move ? [move] : [];
        }
        for (const move of moves) transitions.push({ rule: target, server: { id, name: server.name }, ...move });
      }
    }
    await applyTransitions(transitions, now);
    return tally(rules.length, transitions);
  };
}
