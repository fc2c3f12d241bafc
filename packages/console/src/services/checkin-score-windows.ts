import type { Insertable } from 'kysely';
import type { Database, SamplesTable } from '../db/schema.js';
import { parseJson } from '../json.js';
import { type ScoreWindowRow, scoreWindows } from '../repositories/samples.repository.js';
import { lockScoreWindowMarks } from '../repositories/servers.repository.js';
import type { ScoreSample } from './score.js';

/**
 * The score reads at most this many of a server's newest samples: ten minutes at the shortest
 * check-in interval the console hands out (5 s), so an agent that checks in faster than it is told
 * cannot make each of its check-ins read more (docs/decisions.md).
 */
export const SCORE_WINDOW_MAX_SAMPLES = 120;

/**
 * Samples one process keeps at most, over all servers (about 200 bytes of heap each: 1,000 full
 * windows of 120 took 23 MB), so at most some 50 MB; past that, the windows written longest ago are
 * dropped first (and read from `samples` at their servers' next check-in). 10,000 servers at a 30 s
 * interval keep 200,000.
 */
export const KEPT_SAMPLES_MAX = 250_000;

/** A `samples` row as the score reads it; `extra` holds the figures without a column of their own. */
export function toScoreSample(row: Omit<ScoreWindowRow, 'server_id'>): ScoreSample {
  const extra = parseJson<Record<string, unknown>>(row.extra, {});
  const num = (k: string) => (typeof extra[k] === 'number' ? (extra[k] as number) : undefined);
  return {
    ts: Number(row.ts),
    cpu_pct: row.cpu_pct,
    mem_used_mb: row.mem_used_mb,
    mem_total_mb: row.mem_total_mb,
    disk_used_pct: row.disk_used_pct,
    load1: row.load1,
    disk_mount: typeof extra.disk_mount === 'string' ? extra.disk_mount : undefined,
    rx_pps: num('rx_pps'),
    tx_pps: num('tx_pps'),
    net_errors_ps: num('net_errors_ps'),
  };
}

/**
 * A check-in's figures as the table gives them back: PostgreSQL stores them as `real` (4 bytes),
 * SQLite as 8-byte doubles. The kept window holds them as stored, so a score from memory is the
 * one a read from `samples` gives (docs/decisions.md, "The score window is kept in memory").
 */
export function asStored(sample: ScoreSample, postgres: boolean): ScoreSample {
  if (!postgres) return sample;
  return {
    ...sample,
    cpu_pct: Math.fround(sample.cpu_pct),
    mem_used_mb: Math.fround(sample.mem_used_mb),
    mem_total_mb: Math.fround(sample.mem_total_mb),
    disk_used_pct: Math.fround(sample.disk_used_pct),
    load1: Math.fround(sample.load1),
  };
}

/** What one group asks for one server: its window starts after `since`; `added` are the samples the group inserted. */
export interface WindowRequest {
  serverId: number;
  since: number;
  added: ScoreSample[];
}

/** A window as kept: the newest samples (at most the maximum, oldest first) of those newer than `since`. */
interface Kept {
  mark: number;
  since: number;
  samples: ScoreSample[];
}

const byTime = (a: ScoreSample, b: ScoreSample) => a.ts - b.ts;

/**
 * The kept samples (oldest first) and the group's, oldest first: what sorting them all gives (a
 * stable sort: a kept sample before an added one of the same time), without the sort when the added
 * ones come after the kept ones in order, as a check-in's sample does (the sort was a check-in's
 * largest cost in this module, docs/performance.md).
 */
function withAdded(kept: ScoreSample[], added: ScoreSample[]): ScoreSample[] {
  let last = kept.length > 0 ? kept[kept.length - 1]!.ts : Number.NEGATIVE_INFINITY;
  for (const sample of added) {
    if (sample.ts < last) return [...kept, ...added].sort(byTime);
    last = sample.ts;
  }
  return kept.concat(added);
}

/** Of `samples` (oldest first), those newer than `since`, at most the newest SCORE_WINDOW_MAX_SAMPLES. */
function newest(samples: ScoreSample[], since: number) {
  let from = Math.max(0, samples.length - SCORE_WINDOW_MAX_SAMPLES);
  while (from < samples.length && samples[from]!.ts <= since) from += 1;
  return samples.slice(from);
}

/**
 * Score windows kept in memory (docs/decisions.md, "The score window is kept in memory"): instead
 * of reading up to 120 samples of each server back at each check-in and parsing them, a process
 * keeps the window of each server it wrote, with the mark it wrote on the server's row
 * (`servers.score_window_mark`). A group reads its servers' marks in its transaction, after its
 * samples are inserted and with the rows locked on PostgreSQL; where the mark is still this
 * process's, nobody else wrote a sample of that server since, and the window is the kept one plus
 * the group's samples. Elsewhere (a first check-in since the process started, another process
 * wrote the server meanwhile) the window is read from `samples` as before.
 */
export function createScoreWindows() {
  const kept = new Map<number, Kept>();
  let keptSamples = 0;

  /**
   * The window of `r` from the kept one and the group's samples, with the mark the server's row must
   * still carry for it to be the window; undefined when none is kept for it.
   */
  function fromKept(r: WindowRequest): { mark: number; samples: ScoreSample[] } | undefined {
    const k = kept.get(r.serverId);
    // A window kept from a later `since` lacks older samples unless it is full (they would not count).
    if (k === undefined || !(r.since >= k.since || k.samples.length >= SCORE_WINDOW_MAX_SAMPLES)) return undefined;
    return { mark: k.mark, samples: newest(withAdded(k.samples, r.added), r.since) };
  }

  return {
    fromKept,

    /**
     * The windows of a group's servers (oldest sample first), in its transaction: `samples` are the
     * group's rows, inserted here first.
     */
    async insertAndRead(
      trx: Database,
      samples: Insertable<SamplesTable>[],
      requests: WindowRequest[],
    ): Promise<Map<number, ScoreSample[]>> {
      const marks = await lockScoreWindowMarks(
        trx,
        requests.map((r) => r.serverId),
        samples,
      );
      const windows = new Map<number, ScoreSample[]>();
      const unknown: WindowRequest[] = [];
      for (const r of requests) {
        const k = fromKept(r);
        if (k !== undefined && marks.get(r.serverId) === k.mark) windows.set(r.serverId, k.samples);
        else unknown.push(r);
      }
      if (unknown.length > 0) {
        const read = await scoreWindows(trx, unknown, SCORE_WINDOW_MAX_SAMPLES);
        for (const r of unknown) {
          windows.set(r.serverId, (read.get(r.serverId) ?? []).map(toScoreSample).sort(byTime));
        }
      }
      return windows;
    },

    /** Keeps a window once the transaction that wrote `mark` on its server's row has committed. */
    keep(serverId: number, window: Kept) {
      keptSamples += window.samples.length - (kept.get(serverId)?.samples.length ?? 0);
      kept.delete(serverId); // re-inserted last: the Map's order is the order of writing
      kept.set(serverId, window);
      for (const [id, oldest] of kept) {
        if (keptSamples <= KEPT_SAMPLES_MAX) break;
        keptSamples -= oldest.samples.length;
        kept.delete(id);
      }
    },
  };
}

/** A new mark for a server's row: random, so another process's mark is never taken for this one's. */
export const newWindowMark = () => Math.floor(Math.random() * 2 ** 53);
