import { ageText, SCORE_WEIGHTS, type ScoreComponents } from '@palisade/protocol';

/** Component weights; they add up to 1000. The model is explained with worked examples in docs/score.md. */
export const WEIGHTS = SCORE_WEIGHTS;

/** Samples older than this before the newest one do not count towards the score. */
export const SCORE_WINDOW_MS = 10 * 60 * 1000;
/** Past this age of the last check-in, old samples say nothing about the server any more. */
export const STALE_AFTER_MS = 60 * 60 * 1000;

export interface ScoreSample {
  ts: number;
  cpu_pct: number;
  mem_used_mb: number;
  mem_total_mb: number;
  disk_used_pct: number;
  load1: number;
  disk_mount?: string | undefined;
  rx_pps?: number | undefined;
  tx_pps?: number | undefined;
  net_errors_ps?: number | undefined;
}

export type SampleComponents = Omit<ScoreComponents, 'freshness'>;

export interface ScoreBase {
  components: SampleComponents;
  notes: string[];
}

export interface ServerScore {
  score: number;
  components: ScoreComponents;
  notes: string[];
}

/** 1 up to `full`, 0 from `zero` on, a straight line between. */
function linear(value: number, full: number, zero: number): number {
  if (!Number.isFinite(value) || value <= full) return 1;
  if (value >= zero) return 0;
  return (zero - value) / (zero - full);
}

const pct = (n: number) => `${Math.round(n)}%`;
const oneDecimal = (n: number) => (Math.round(n * 10) / 10).toString();

/** The five sample-based components, from the samples of the last ten minutes before the newest one. */
export function scoreFromSamples(all: readonly ScoreSample[], cores: number): ScoreBase {
  if (all.length === 0) {
    return { components: { cpu: 0, memory: 0, disk: 0, network: 0, stability: 0 }, notes: ['No samples yet'] };
  }
  // The first of the newest, as a reduce would find it, without a call per sample.
  let newest = all[0]!;
  for (const s of all) if (s.ts > newest.ts) newest = s;
  // One pass over the window (a check-in computes this for its server's up to 120 samples), each
  // sum taken in the samples' order as a mean of its own would take it, so the figures are the same.
  const from = newest.ts - SCORE_WINDOW_MS;
  let count = 0;
  let oldest = Number.POSITIVE_INFINITY;
  let cpuSum = 0;
  let memSum = 0;
  let loadSum = 0;
  let errorCount = 0;
  let errorSum = 0;
  for (const s of all) {
    if (!(s.ts > from)) continue;
    count += 1;
    if (s.ts < oldest) oldest = s.ts;
    cpuSum += s.cpu_pct;
    memSum += s.mem_total_mb > 0 ? (100 * s.mem_used_mb) / s.mem_total_mb : 0;
    loadSum += s.load1;
    if (s.net_errors_ps !== undefined) {
      errorCount += 1;
      errorSum += (100 * (s.net_errors_ps ?? 0)) / Math.max((s.rx_pps ?? 0) + (s.tx_pps ?? 0), 1);
    }
  }
  const minutes = Math.max(1, Math.round((newest.ts - oldest) / 60_000));
  const notes: string[] = [];

  const cpuAvg = cpuSum / Math.max(count, 1);
  const cpu = Math.round(WEIGHTS.cpu * linear(cpuAvg, 70, 100));
  if (cpu < WEIGHTS.cpu) notes.push(`CPU averaged ${pct(cpuAvg)} over the last ${minutes} min`);

  const memAvg = memSum / Math.max(count, 1);
  const memory = Math.round(WEIGHTS.memory * linear(memAvg, 80, 100));
  if (memory < WEIGHTS.memory) notes.push(`Memory averaged ${pct(memAvg)} used`);

  const disk = Math.round(WEIGHTS.disk * linear(newest.disk_used_pct, 80, 98));
  if (disk < WEIGHTS.disk) {
    notes.push(`Disk ${newest.disk_mount ? `${newest.disk_mount} ` : ''}at ${pct(newest.disk_used_pct)} used`);
  }

  const errorPct = errorCount > 0 ? errorSum / errorCount : 0;
  const network = Math.round(WEIGHTS.network * linear(errorPct, 0.1, 5));
  if (network < WEIGHTS.network) notes.push(`Network lost or errored ${oneDecimal(errorPct)}% of packets`);

  const loadPerCore = loadSum / Math.max(count, 1) / Math.max(cores, 1);
  const stability = Math.round(WEIGHTS.stability * linear(loadPerCore, 1, 3));
  if (stability < WEIGHTS.stability) notes.push(`Load averaged ${oneDecimal(loadPerCore)} per core`);

  return { components: { cpu, memory, disk, network, stability }, notes };
}

const FRESH_FULL_MS = 60_000;
const FRESH_ZERO_MS = 600_000;

/** Full points up to a minute after the last check-in, none after ten minutes. */
export function freshness(lastSeen: number, now: number): { points: number; note: string | null } {
  const age = Math.max(0, now - lastSeen);
  const points = Math.round(WEIGHTS.freshness * linear(age, FRESH_FULL_MS, FRESH_ZERO_MS));
  return { points, note: points < WEIGHTS.freshness ? `Last check-in ${ageText(age)} ago` : null };
}

/** The whole score at read time: the stored sample-based part plus freshness from the check-in age now. */
export function serverScore(lastSeen: number | null, base: ScoreBase | null, now: number): ServerScore {
  if (lastSeen === null) {
    return {
      score: 0,
      components: { cpu: 0, memory: 0, disk: 0, network: 0, stability: 0, freshness: 0 },
      notes: ['The agent has never checked in'],
    };
  }
  const fresh = freshness(lastSeen, now);
  const stale = now - lastSeen > STALE_AFTER_MS;
  const sampled: ScoreBase =
    base && !stale
      ? base
      : {
          components: { cpu: 0, memory: 0, disk: 0, network: 0, stability: 0 },
          notes: [stale ? 'No samples in the last hour' : 'No samples yet'],
        };
  const components: ScoreComponents = { ...sampled.components, freshness: fresh.points };
  const score = Object.values(components).reduce((a, b) => a + b, 0);
  return { score, components, notes: fresh.note ? [...sampled.notes, fresh.note] : [...sampled.notes] };
}

/** Just the number, for lists: the stored sample-based total plus freshness now. Agrees with serverScore(). */
export function serverScoreTotal(lastSeen: number | null, baseTotal: number | null, now: number): number {
  if (lastSeen === null) return 0;
  const fresh = freshness(lastSeen, now).points;
  return now - lastSeen > STALE_AFTER_MS || baseTotal === null ? fresh : baseTotal + fresh;
}

/**
 * The first instant after `now` at which serverScoreTotal() may answer another number by the passing
 * of time alone (or sooner: never later). Freshness falls one rounded point at a time between one
 * and ten minutes after the check-in, and the stored part stops counting after an hour.
 */
export function scoreTotalExpiresAt(lastSeen: number | null, baseTotal: number | null, now: number): number {
  if (lastSeen === null) return Number.POSITIVE_INFINITY;
  const age = Math.max(0, now - lastSeen);
  let expires = Number.POSITIVE_INFINITY;
  if (baseTotal !== null && age <= STALE_AFTER_MS) expires = lastSeen + STALE_AFTER_MS;
  if (age <= FRESH_FULL_MS) return Math.min(expires, lastSeen + FRESH_FULL_MS);
  const points = freshness(lastSeen, now).points;
  if (points === 0) return expires;
  // round(x) stays `points` while x = W·(10 min − age)/9 min ≥ points − ½; a millisecond early keeps
  // floating-point error on the safe side.
  const lastAge = FRESH_ZERO_MS - ((points - 0.5) * (FRESH_ZERO_MS - FRESH_FULL_MS)) / WEIGHTS.freshness;
  return Math.min(expires, lastSeen + Math.floor(lastAge) - 1);
}

/**
 * The score as it was at the last check-in (full freshness then): what an offline server shows,
 * greyed and labelled with its time, instead of a number that decays as if it were measured now.
 */
export function lastKnownScore(lastSeen: number | null, baseTotal: number | null) {
  return lastSeen === null ? null : { score: (baseTotal ?? 0) + WEIGHTS.freshness, at: lastSeen };
}
