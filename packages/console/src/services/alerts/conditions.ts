import { ageText, LATE_SLACK_MS } from '@palisade/protocol';
import { CONSOLE_VERSION, isOlderAgent } from '../../config.js';
import type { ServerRow } from '../../db/schema.js';
import type { MetricSample, UnverifiedRun } from '../../repositories/alerts.repository.js';
import { serverScoreTotal } from '../score.js';
import { ONLINE_WINDOW_MS, runChecks, serverDetail } from '../servers/views.js';
import { type SilenceGrace, withinGrace } from './rounds.js';
import type { RuleRow } from './views.js';

/** Whether a rule's condition holds on a server now, the figure behind it, and words for the notification. */
export interface Condition {
  active: boolean;
  value: number | null;
  title: string;
  body: string;
}

/** How far back a metric rule looks past its N minutes for the run of samples above the threshold. */
export const METRIC_GRACE_MS = 5 * 60_000;

/** A time in an alert's words: `2026-11-26 20:11:58 UTC` (readable wherever it lands; not ISO's `T…Z`). */
export const utcTime = (ms: number) => `${new Date(ms).toISOString().slice(0, 19).replace('T', ' ')} UTC`;

const METRIC_NAMES = { cpu: 'CPU', memory: 'memory', disk: 'disk', load: 'load' } as const;

function metricValue(metric: NonNullable<RuleRow['metric']>, s: MetricSample): number {
  switch (metric) {
    case 'cpu':
      return Number(s.cpu_pct);
    case 'memory':
      return Number(s.mem_total_mb) > 0 ? (100 * Number(s.mem_used_mb)) / Number(s.mem_total_mb) : 0;
    case 'disk':
      return Number(s.disk_used_pct);
    case 'load':
      return Number(s.load1);
  }
}

const round = (n: number) => Math.round(n * 10) / 10;
const unit = (metric: NonNullable<RuleRow['metric']>) => (metric === 'load' ? '' : '%');
const ago = (ms: number) => `${Math.max(1, Math.round(ms / 60_000))} min`;

/** What every rule kind's condition reads: the server, the time, and the round's samples and grace. */
interface Judging {
  server: ServerRow;
  name: string;
  /** The server's last check-in (a server that never checked in is not judged). */
  lastSeen: number;
  now: number;
  /** The server's raw samples, newest first, reaching back at least this rule's minutes plus METRIC_GRACE_MS. */
  recent: MetricSample[];
  /** When a server is late (lateAfterMs() of the console's check-in interval): `late` rules. */
  lateAfter: number;
  /** After a start or an outage: a silence reaching back into it is not judged yet (rounds.ts). */
  grace: SilenceGrace | undefined;
}

function offline({ name, lastSeen, now, grace }: Judging): Condition | null {
  if (withinGrace(lastSeen, now, grace)) return null;
  const silent = now - lastSeen;
  const active = silent >= ONLINE_WINDOW_MS;
  return active
    ? {
        active,
        value: Math.round(silent / 1000),
        title: `${name} is offline`,
        body: `No check-in for ${ago(silent)} (last at ${utcTime(lastSeen)}).`,
      }
    : {
        active,
        value: 0,
        title: `${name} is back online`,
        body: `It checked in at ${utcTime(lastSeen)}.`,
      };
}

/**
 * A server whose agent has never checked in counts as offline once it has been on the fleet this
 * long: time to install the agent, never silence for good (docs/alerts.md, "Rules").
 */
export const NEVER_SEEN_OFFLINE_MS = 10 * 60_000;

/** The offline rule on a server with no check-in on record: fires once it was added NEVER_SEEN_OFFLINE_MS ago. */
function neverSeen(server: ServerRow, now: number, grace: SilenceGrace | undefined): Condition | null {
  const added = Number(server.created_at);
  if (withinGrace(added, now, grace)) return null;
  const silent = now - added;
  if (silent < NEVER_SEEN_OFFLINE_MS) return null;
  return {
    active: true,
    value: Math.round(silent / 1000),
    title: `${server.name} is offline: its agent has never checked in`,
    body: `Added ${ago(silent)} ago (at ${utcTime(added)}), and no check-in since: is the agent installed and can it reach the console?`,
  };
}

/**
 * The fleet list's `late` (services/servers/state.ts), and on past two minutes: a late rule tells
 * the silence first, and "checks in again" when it ends, offline or not (docs/alerts.md). Like
 * offline, a silence reaching back into the console's own downtime waits for the grace.
 */
function late({ name, lastSeen, now, lateAfter, grace }: Judging): Condition | null {
  if (withinGrace(lastSeen, now, grace)) return null;
  const silent = now - lastSeen;
  const active = silent >= lateAfter;
  const every = ageText((lateAfter - LATE_SLACK_MS) / 2);
  return active
    ? {
        active,
        value: Math.round(silent / 1000),
        title: `${name} is late`,
        body: `No check-in for ${ageText(silent)}; its agent checks in every ${every} (last at ${utcTime(lastSeen)}).`,
      }
    : {
        active,
        value: 0,
        title: `${name} checks in again`,
        body: `It checked in at ${utcTime(lastSeen)}.`,
      };
}

/**
 * The console's calls to the agent fail (services/servers/state.ts), whether or not it is late
 * meanwhile. Offline is the offline rule's to tell: the state stays, and "reachable again" is sent
 * once the calls are answered (docs/alerts.md).
 */
function unreachable(rule: RuleRow, { server, name, lastSeen, now }: Judging): Condition | null {
  if (now - lastSeen >= ONLINE_WINDOW_MS) return null;
  const failingFor = server.last_call_error_at !== null ? now - server.last_call_error_at : null;
  const active = failingFor !== null && failingFor >= Number(rule.minutes) * 60_000;
  return active
    ? {
        active,
        value: Math.round(failingFor / 60_000),
        title: `${name} is unreachable`,
        body: `It checks in, but the console's calls to its agent have failed for ${ago(failingFor)}: ${server.last_call_error ?? 'no answer'}.`,
      }
    : {
        active,
        value: 0,
        title: `${name} is reachable again`,
        body: "The agent answers the console's calls again.",
      };
}

function agentOutdated({ server, name }: Judging): Condition | null {
  if (server.agent_version === null) return null;
  const active = isOlderAgent(server.agent_version);
  return active
    ? {
        active,
        value: null,
        title: `${name}: agent ${server.agent_version} is older than the console (${CONSOLE_VERSION})`,
        body: `Upgrade the agent on ${name} to ${CONSOLE_VERSION} (docs/agent.md).`,
      }
    : {
        active,
        value: null,
        title: `${name}: agent upgraded to ${server.agent_version}`,
        body: `The agent is no older than the console (${CONSOLE_VERSION}).`,
      };
}

function metricAbove(rule: RuleRow, { name, now, recent }: Judging): Condition | null {
  const metric = rule.metric!;
  const threshold = Number(rule.threshold);
  const windowMs = Number(rule.minutes) * 60_000;
  const since = now - windowMs - METRIC_GRACE_MS;
  const samples = recent.filter((x) => x.ts >= since);
  if (samples.length === 0) return null;
  const latest = metricValue(metric, samples[0]!);
  // The unbroken run of samples above the threshold, newest back: it must span the rule's minutes.
  let runStart = Number(samples[0]!.ts);
  for (const s of samples) {
    if (metricValue(metric, s) <= threshold) break;
    runStart = Number(s.ts);
  }
  const active = latest > threshold && Number(samples[0]!.ts) - runStart >= windowMs;
  const label = METRIC_NAMES[metric];
  const figure = `${round(latest)}${unit(metric)}`;
  const limit = `${threshold}${unit(metric)}`;
  return active
    ? {
        active,
        value: round(latest),
        title: `${name}: ${label} at ${figure}`,
        body: `${label} above ${limit}${windowMs > 0 ? ` for ${ago(windowMs)}` : ''}.`,
      }
    : {
        active,
        value: round(latest),
        title: `${name}: ${label} back to ${figure}`,
        body: `The threshold is ${limit}.`,
      };
}

/** The score falls with silence (freshness), so it waits out the same grace as `offline`. */
function scoreBelow(rule: RuleRow, { server, name, lastSeen, now, grace }: Judging): Condition | null {
  if (withinGrace(lastSeen, now, grace)) return null;
  const score = serverScoreTotal(
    lastSeen,
    server.score_base_total === null ? null : Number(server.score_base_total),
    now,
  );
  const threshold = Number(rule.threshold);
  const active = score < threshold;
  return {
    active,
    value: score,
    title: active ? `${name}: score ${score}, below ${threshold}` : `${name}: score back to ${score}`,
    body: `The rule fires below ${threshold}.`,
  };
}

function underAttack({ server, name, lastSeen, now }: Judging): Condition | null {
  const sample = serverDetail(server, now).latest_sample as Record<string, unknown> | null;
  const count = sample?.attacks_active;
  if (typeof count !== 'number') return null;
  const active = count > 0;
  return active
    ? {
        active,
        value: count,
        title: `${name} is under attack`,
        body: `${count} attack${count === 1 ? '' : 's'} in progress, reported by the agent at ${utcTime(lastSeen)}.`,
      }
    : { active, value: 0, title: `The attack on ${name} ended`, body: 'The agent reports no attack in progress.' };
}

/**
 * The rule's condition on one server (docs/alerts.md, "Rules"), or null when it cannot be told
 * (no check-in yet but for the offline rule, no recent samples, an agent that does not report attacks,
 * an unreachable rule on an offline server): the state stays as it was. Event rules (`benchmark_unverified`) have no condition:
 * benchmarkEvent() words each of their events.
 */
export function conditionOf(
  rule: RuleRow,
  server: ServerRow,
  now: number,
  recent: MetricSample[],
  lateAfter: number,
  grace?: SilenceGrace,
): Condition | null {
  if (server.last_seen === null) return rule.kind === 'offline' ? neverSeen(server, now, grace) : null;
  const judging: Judging = {
    server,
    name: server.name,
    lastSeen: Number(server.last_seen),
    now,
    recent,
    lateAfter,
    grace,
  };
  switch (rule.kind) {
    case 'offline':
      return offline(judging);
    case 'late':
      return late(judging);
    case 'unreachable':
      return unreachable(rule, judging);
    case 'agent_outdated':
      return agentOutdated(judging);
    case 'benchmark_unverified':
      return null;
    case 'metric':
      return metricAbove(rule, judging);
    case 'score':
      return scoreBelow(rule, judging);
    case 'attack':
      return underAttack(judging);
  }
}

/** The words of a `benchmark_unverified` notification: the run, and the checks it failed. */
export function benchmarkEvent(server: ServerRow, run: UnverifiedRun): { title: string; body: string } {
  const failed = runChecks(run.checks)
    .filter((c) => !c.ok)
    .map((c) => (c.detail ? `${c.name}: ${c.detail}` : c.name));
  return {
    title: `${server.name}: benchmark "${run.label}" came out unverified`,
    body: `Run ${run.id} finished at ${utcTime(run.finished_at)}${
      run.score_total === null ? '' : ` with a total of ${run.score_total}`
    }; failed: ${failed.length > 0 ? failed.join('; ') : 'a consistency check'}.`,
  };
}
