import type {
  BenchmarkMeasurements,
  BenchmarkReport,
  BenchmarkRun,
  DashboardServerSummary,
  FleetCounts,
  ServerDetail,
  ServerSummary,
  VerificationCheck,
} from '@palisade/protocol';
import { ONLINE_WINDOW_MS, TAG_PATTERN } from '@palisade/protocol';
import { isOlderAgent } from '../../config.js';
import type { BenchmarkRunRow, ServerRow } from '../../db/schema.js';
import { parseJson } from '../../json.js';
import {
  lastKnownScore,
  type ScoreBase,
  scoreTotalExpiresAt,
  serverScore,
  serverScoreTotal,
  WEIGHTS,
} from '../score.js';
import type { LinkState } from './links.js';
import { isOnline, type StateRow, serverState } from './state.js';

// The one place the JSON columns of `servers` and `benchmark_runs` are read and rows become the
// shapes the API answers (docs/architecture.md, "The console").

export { ONLINE_WINDOW_MS } from '@palisade/protocol';

type SummaryRow = StateRow &
  Pick<ServerRow, 'id' | 'name' | 'hostname' | 'public_ip' | 'score_base_total' | 'attacks_active' | 'tags'>;

/** `servers.tags`: the user's tags, a JSON array; anything unreadable counts as none. */
export function serverTags(text: string | null): string[] {
  const tags = parseJson<unknown>(text, []);
  return Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string' && TAG_PATTERN.test(t)) : [];
}

/** `servers.facts`: what the agent reported about its host; `{}` until its first check-in. */
export function serverFacts(text: string | null): Record<string, unknown> {
  return parseJson<Record<string, unknown>>(text, {});
}

/** `servers.latest_sample`: the newest check-in's sample as the agent sent it, or null before one. */
export const latestSampleOf = (text: string | null) => parseJson<Record<string, unknown> | null>(text, null);

const scoreBase = (row: Pick<ServerRow, 'score_base'>) => parseJson<ScoreBase | null>(row.score_base, null);

export function serverSummary(row: SummaryRow, now: number): ServerSummary {
  return {
    id: row.id,
    label: row.name,
    // `hostname` is a string in the v1 shape; until the agent reports one, the server's name stands in
    // (never the agent address, which stays on the console: docs/decisions.md).
    hostname: row.hostname ?? row.name,
    online: isOnline(row, now),
    score: serverScoreTotal(row.last_seen, row.score_base_total, now),
    last_seen: row.last_seen ?? 0,
    public_ip: row.public_ip,
  };
}

/**
 * The first instant after `now` at which serverSummary() may answer otherwise by the passing of time
 * alone (never later): `online` turns false two minutes after the check-in, and the score decays.
 */
export function summaryExpiresAt(row: SummaryRow, now: number): number {
  const score = scoreTotalExpiresAt(row.last_seen, row.score_base_total, now);
  if (row.last_seen === null || now - row.last_seen >= ONLINE_WINDOW_MS) return score;
  return Math.min(score, row.last_seen + ONLINE_WINDOW_MS);
}

/**
 * The dashboard's state fields of a server (packages/protocol/src/dashboard.ts), from serverState();
 * `lateAfter`: lateAfterMs() of the console's check-in interval.
 */
export function stateFields(row: SummaryRow, now: number, lateAfter: number) {
  const { state, reason } = serverState(row, now, lateAfter);
  return {
    state,
    state_reason: reason,
    last_known_score: state === 'offline' ? lastKnownScore(row.last_seen, row.score_base_total) : null,
    attacks_active: state === 'offline' ? null : row.attacks_active,
    as_of: now,
  };
}

/** The dashboard's fleet list entry: the v1 summary plus its state. */
export function dashboardSummary(row: SummaryRow, now: number, lateAfter: number): DashboardServerSummary {
  return { ...serverSummary(row, now), ...stateFields(row, now, lateAfter), tags: serverTags(row.tags) };
}

/** How many servers are in each state, and how many of those checking in report an active attack. */
export function fleetCounts(servers: readonly DashboardServerSummary[]): FleetCounts {
  const counts = { online: 0, late: 0, unreachable: 0, offline: 0, under_attack: 0 };
  for (const s of servers) {
    counts[s.state] += 1;
    if ((s.attacks_active ?? 0) > 0) counts.under_attack += 1;
  }
  return counts;
}

export function serverDetail(row: ServerRow, now: number): ServerDetail {
  const score = serverScore(row.last_seen, scoreBase(row), now);
  return {
    ...serverSummary(row, now),
    score: score.score,
    created_at: row.created_at,
    facts: serverFacts(row.facts),
    score_components: score.components,
    score_notes: score.notes,
    latest_sample: parseJson<ServerDetail['latest_sample']>(row.latest_sample, null),
  };
}

/** The dashboard's view of a server: the v1 detail plus what only the owner's dashboard needs. Never the key or the agent address. */
export function dashboardServer(row: ServerRow, now: number, lateAfter: number, connection: LinkState) {
  return {
    ...serverDetail(row, now),
    ...stateFields(row, now, lateAfter),
    tags: serverTags(row.tags),
    product_id: row.product_id,
    agent_version: row.agent_version,
    /** Older than this console's bundled agent: re-running the install line upgrades it (docs/agent.md). */
    agent_outdated: isOlderAgent(row.agent_version),
    enrolled: row.daemon_token_hash !== null,
    tls_fingerprint: row.tls_fingerprint,
    connection,
  };
}

/** The dashboard's score section: the score with its components and the weights behind them. */
export function scoreSection(row: ServerRow, now: number, lateAfter: number) {
  const { state, last_known_score, as_of } = stateFields(row, now, lateAfter);
  return { ...serverScore(row.last_seen, scoreBase(row), now), weights: WEIGHTS, state, last_known_score, as_of };
}

/** The dashboard's facts section. */
export function factsSection(row: ServerRow) {
  return {
    hostname: row.hostname,
    public_ip: row.public_ip,
    agent_version: row.agent_version,
    facts: serverFacts(row.facts),
  };
}

/*
 * A done run's `hardware` column holds the report's parts the dashboard shows: `{hardware, measurements,
 * skipped}`. Runs stored before the measurements were kept hold the hardware object alone
 * (docs/decisions.md, "Benchmark figures kept in the hardware column").
 */
export function storedReport(report: Pick<BenchmarkReport, 'hardware' | 'measurements' | 'skipped'>): string {
  return JSON.stringify({ hardware: report.hardware, measurements: report.measurements, skipped: report.skipped });
}

function reportParts(text: string) {
  const stored = parseJson<Record<string, unknown>>(text, {});
  const kept = typeof stored.hardware === 'object' && stored.hardware !== null && 'measurements' in stored;
  return {
    hardware: kept ? (stored.hardware as Record<string, unknown>) : stored,
    measurements: kept ? (stored.measurements as BenchmarkMeasurements) : null,
    skipped: kept ? ((stored.skipped ?? {}) as Record<string, string>) : {},
  };
}

type RunScores = Pick<
  BenchmarkRunRow,
  'score_cpu' | 'score_disk' | 'score_network' | 'score_stability' | 'score_total'
>;

const runScores = (run: RunScores) => ({
  cpu: run.score_cpu,
  disk: run.score_disk,
  network: run.score_network,
  stability: run.score_stability,
  total: run.score_total,
});

/** A run's consistency checks (`benchmark_runs.checks`), as the dashboard and the alerts show them. */
export function runChecks(checks: string): VerificationCheck[] {
  return parseJson<VerificationCheck[]>(checks, []);
}

/** The dashboard's view of a run, any status, log and checks included; never the run token. */
export function runView(run: BenchmarkRunRow) {
  return {
    id: run.id,
    label: run.label,
    status: run.status,
    scores: runScores(run),
    verified: run.verified === 1,
    checks: runChecks(run.checks),
    ...reportParts(run.hardware),
    log: run.log,
    error: run.error,
    created_at: run.created_at,
    started_at: run.started_at,
    finished_at: run.finished_at,
  };
}

type DoneRunRow = RunScores & Pick<BenchmarkRunRow, 'id' | 'label' | 'verified' | 'finished_at'>;

/** The v1 view of a finished run: never the log or the run token. */
export function doneRunView(run: DoneRunRow): BenchmarkRun {
  return {
    id: run.id,
    label: run.label,
    status: 'done' as const,
    scores: runScores(run),
    verified: run.verified === 1,
    finished_at: run.finished_at ?? 0,
  };
}
