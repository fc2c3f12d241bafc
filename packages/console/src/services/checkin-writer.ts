import type { Insertable, RawBuilder } from 'kysely';
import type { Database, SamplesTable } from '../db/schema.js';
import { isPostgres } from '../repositories/dialect.js';
import { rawSampleTimes } from '../repositories/samples.repository.js';
import {
  type CheckinFields,
  updateServersAfterCheckin,
  updateServersStillMarked,
} from '../repositories/servers.repository.js';
import { asStored, createScoreWindows, newWindowMark, toScoreSample } from './checkin-score-windows.js';
import { SCORE_WINDOW_MS, type ScoreSample, scoreFromSamples } from './score.js';

/** What one check-in writes: its sample, the outage samples it carried, and its server's row. */
export interface CheckinWrite {
  serverId: number;
  /** The server's account, whose v1 answers the check-in changes. */
  accountId: number;
  /** The check-in's own sample, as a `samples` row (`server_id` and `resolution` are added here). */
  sample: Omit<Insertable<SamplesTable>, 'server_id' | 'resolution'> & { ts: number };
  /** Samples from an outage; those the server already has (same time) are skipped. */
  past: (Omit<Insertable<SamplesTable>, 'server_id' | 'resolution'> & { ts: number })[];
  cores: number;
  fields: Omit<CheckinFields, 'id' | 'score_base' | 'score_base_total' | 'score_window_mark'>;
}

type Waiting = { write: CheckinWrite; resolve: (announced: boolean) => void; reject: (err: unknown) => void };

export interface CheckinWriterOptions {
  /**
   * The change message of the check-ins' accounts as a statement to run within a group's own
   * (services/coherence: `dataChangesWith`), or null to leave it to the caller after the commit.
   */
  announce?: (accountIds: number[]) => RawBuilder<unknown> | null;
}

/** Check-ins written in one transaction at most; the rest wait for the next one. */
export const MAX_GROUP = 256;

/**
 * Group commit for check-ins (docs/performance.md, "Check-in ingest and capacity"): check-ins that arrive while
 * the previous group is being written (or within one turn of the event loop when none is) are
 * written together in one transaction, with multi-row INSERTs and one UPDATE per server. Each
 * check-in's promise settles only after the COMMIT that holds it, so an acknowledged check-in is
 * never lost. When a group fails, its check-ins are written again one by one, so one bad row only
 * fails its own request.
 */
export function createCheckinWriter(db: Database, { announce }: CheckinWriterOptions = {}) {
  let queue: Waiting[] = [];
  let draining = false;
  let scheduled = false;
  const postgres = isPostgres(db);
  const scoreWindows = createScoreWindows();
  const counts = { keptGroups: 0, rowsLeft: 0 };

  /** The group's sample rows (outage samples not yet stored, once each) and each server's new samples, for its score. */
  async function sampleRows(trx: Database, writes: CheckinWrite[]) {
    // Outage samples the server already has are skipped, as are ones an earlier check-in of this group wrote.
    const written = new Set<string>();
    const rows: Insertable<SamplesTable>[] = [];
    const added = new Map<number, ScoreSample[]>();
    const add = (serverId: number, sample: CheckinWrite['sample']) => {
      rows.push({ server_id: serverId, resolution: 'raw', ...sample });
      const score = asStored(toScoreSample(sample), postgres);
      const mine = added.get(serverId);
      if (mine) mine.push(score);
      else added.set(serverId, [score]);
    };
    for (const w of writes) {
      if (w.past.length > 0) {
        const known = await rawSampleTimes(
          trx,
          w.serverId,
          w.past.map((p) => p.ts),
        );
        for (const p of w.past) {
          const key = `${w.serverId}:${p.ts}`;
          if (known.has(p.ts) || written.has(key)) continue;
          written.add(key);
          add(w.serverId, p);
        }
      }
      written.add(`${w.serverId}:${w.sample.ts}`);
      add(w.serverId, w.sample);
    }
    return { rows, added };
  }

  /**
   * Each server's part of the group: a server that checked in twice in the group ends as its later
   * check-in leaves it; one lock order (by id) for every writer.
   */
  function windowRequests(writes: CheckinWrite[], added: Map<number, ScoreSample[]>) {
    const last = new Map<number, CheckinWrite>();
    for (const w of writes) last.set(w.serverId, w);
    const ordered = [...last.values()].sort((a, b) => a.serverId - b.serverId);
    const requests = ordered.map((w) => ({
      serverId: w.serverId,
      since: w.sample.ts - SCORE_WINDOW_MS,
      added: added.get(w.serverId)!,
    }));
    return { ordered, requests };
  }

  /** The servers' rows: each one's score from its window, and a new mark for the window kept. */
  function rowUpdates(ordered: CheckinWrite[], windows: Map<number, ScoreSample[]>): CheckinFields[] {
    return ordered.map((w) => {
      const base = scoreFromSamples(windows.get(w.serverId)!, w.cores);
      return {
        id: w.serverId,
        ...w.fields,
        score_base: JSON.stringify(base),
        score_base_total: Object.values(base.components).reduce((a, b) => a + b, 0),
        score_window_mark: newWindowMark(),
      };
    });
  }

  /** Once committed: the windows written are kept, with the marks written on their rows. */
  function keepWindows(
    requests: { serverId: number; since: number }[],
    updates: CheckinFields[],
    windows: Map<number, ScoreSample[]>,
  ) {
    return () => {
      for (const [i, r] of requests.entries()) {
        scoreWindows.keep(r.serverId, {
          mark: updates[i]!.score_window_mark!,
          since: r.since,
          samples: windows.get(r.serverId)!,
        });
      }
    };
  }

  /**
   * Writes a group in its transaction (its samples already stored with `stored`); answers what to
   * do once it has committed.
   */
  async function writeGroup(trx: Database, writes: CheckinWrite[], stored: boolean) {
    const { rows, added } = await sampleRows(trx, writes);
    const { ordered, requests } = windowRequests(writes, added);
    const windows = await scoreWindows.insertAndRead(trx, stored ? [] : rows, requests);
    const updates = rowUpdates(ordered, windows);
    await updateServersAfterCheckin(trx, updates);
    return keepWindows(requests, updates, windows);
  }

  /**
   * PostgreSQL, when every server of the group has its window kept and no check-in carries outage
   * samples (a console's steady state): the group in one statement instead of a transaction of
   * four (updateServersStillMarked), each server's row written only where it still carries the mark
   * of the kept window the score was computed from. Answers the check-ins whose server's row was
   * not written (another process wrote it meanwhile): their samples are stored, their rows still to
   * write; or null when the group does not qualify. Throws, with nothing written, when the statement fails.
   */
  async function commitKept(on: Database, group: Waiting[]): Promise<Waiting[] | null> {
    if (!postgres || group.some((g) => g.write.past.length > 0)) return null;
    const writes = group.map((g) => g.write);
    const { rows, added } = await sampleRows(on, writes);
    const { ordered, requests } = windowRequests(writes, added);
    const windows = new Map<number, ScoreSample[]>();
    const expected = new Map<number, number>();
    for (const r of requests) {
      const k = scoreWindows.fromKept(r);
      if (k === undefined) return null;
      windows.set(r.serverId, k.samples);
      expected.set(r.serverId, k.mark);
    }
    const updates = rowUpdates(ordered, windows);
    const message = announce?.([...new Set(writes.map((w) => w.accountId))]) ?? null;
    const written = await updateServersStillMarked(
      on,
      updates.map((u) => ({ ...u, expected_mark: expected.get(u.id)! })),
      rows,
      message,
    );
    counts.keptGroups += 1;
    counts.rowsLeft += requests.length - written.size;
    const kept = requests.filter((r) => written.has(r.serverId));
    keepWindows(
      kept,
      updates.filter((u) => written.has(u.id)),
      windows,
    )();
    for (const g of group) if (written.has(g.write.serverId)) g.resolve(message !== null);
    return group.filter((g) => !written.has(g.write.serverId));
  }

  async function commit(on: Database, group: Waiting[]) {
    let pending = group;
    let stored = false;
    try {
      const left = await commitKept(on, group);
      if (left !== null) {
        if (left.length === 0) return;
        pending = left;
        stored = true;
      }
      const committed = await on.transaction().execute((trx) =>
        writeGroup(
          trx,
          pending.map((g) => g.write),
          stored,
        ),
      );
      committed();
      for (const g of pending) g.resolve(false);
      return;
    } catch (err) {
      if (pending.length === 1) {
        pending[0]!.reject(err);
        return;
      }
    }
    for (const g of pending) {
      try {
        (await on.transaction().execute((trx) => writeGroup(trx, [g.write], stored)))();
        g.resolve(false);
      } catch (err) {
        g.reject(err);
      }
    }
  }

  async function commitAll(on: Database) {
    while (queue.length > 0) {
      const group = queue.slice(0, MAX_GROUP);
      queue = queue.slice(group.length);
      await commit(on, group);
    }
  }

  /** Starts a drain on the next turn of the event loop, unless one is running or about to. */
  function schedule() {
    if (draining || scheduled) return;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      void drain();
    });
  }

  async function drain() {
    draining = true;
    try {
      // On PostgreSQL the groups keep one connection while check-ins are waiting, so a group never
      // queues for a pooled connection behind the requests' own reads. SQLite has one connection.
      if (postgres) await db.connection().execute(commitAll);
      else await commitAll(db);
    } catch (err) {
      // No connection: every check-in waiting fails with that error (each group's own are settled in commit).
      for (const g of queue.splice(0)) g.reject(err);
    } finally {
      draining = false;
      // Check-ins that arrived while the connection was being released start the next drain.
      if (queue.length > 0) schedule();
    }
  }

  return {
    /**
     * Resolves once the check-in is committed, with whether its account's change message went out
     * with that commit (`announce`); rejects with the error of its own write.
     */
    write(write: CheckinWrite): Promise<boolean> {
      return new Promise((resolve, reject) => {
        queue.push({ write, resolve, reject });
        schedule();
      });
    },

    /** Groups written in one statement (commitKept), and rows that statement left to a transaction. */
    stats: () => ({ ...counts }),
  };
}
