import type { Insertable } from 'kysely';
import type { Database, SamplesTable } from '../db/schema.js';
import { isPostgres } from '../repositories/dialect.js';
import { rawSampleTimes } from '../repositories/samples.repository.js';
import { type CheckinFields, updateServersAfterCheckin } from '../repositories/servers.repository.js';
import { asStored, createScoreWindows, newWindowMark, toScoreSample } from './checkin-score-windows.js';
import { SCORE_WINDOW_MS, type ScoreSample, scoreFromSamples } from './score.js';

/** What one check-in writes: its sample, the outage samples it carried, and its server's row. */
export interface CheckinWrite {
  serverId: number;
  /** The check-in's own sample, as a `samples` row (`server_id` and `resolution` are added here). */
  sample: Omit<Insertable<SamplesTable>, 'server_id' | 'resolution'> & { ts: number };
  /** Samples from an outage; those the server already has (same time) are skipped. */
  past: (Omit<Insertable<SamplesTable>, 'server_id' | 'resolution'> & { ts: number })[];
  cores: number;
  fields: Omit<CheckinFields, 'id' | 'score_base' | 'score_base_total' | 'score_window_mark'>;
}

type Waiting = { write: CheckinWrite; resolve: () => void; reject: (err: unknown) => void };

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
export function createCheckinWriter(db: Database) {
  let queue: Waiting[] = [];
  let draining = false;
  let scheduled = false;
  const postgres = isPostgres(db);
  const scoreWindows = createScoreWindows();

  /** Writes a group in its transaction; answers what to do once it has committed. */
  async function writeGroup(trx: Database, writes: CheckinWrite[]) {
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
    // A server that checked in twice in the group ends as its later check-in leaves it; one lock
    // order (by id) for every writer.
    const last = new Map<number, CheckinWrite>();
    for (const w of writes) last.set(w.serverId, w);
    const ordered = [...last.values()].sort((a, b) => a.serverId - b.serverId);
    const requests = ordered.map((w) => ({
      serverId: w.serverId,
      since: w.sample.ts - SCORE_WINDOW_MS,
      added: added.get(w.serverId)!,
    }));
    const windows = await scoreWindows.insertAndRead(trx, rows, requests);
    const marks = ordered.map(() => newWindowMark());
    const updates: CheckinFields[] = ordered.map((w, i) => {
      const base = scoreFromSamples(windows.get(w.serverId)!, w.cores);
      return {
        id: w.serverId,
        ...w.fields,
        score_base: JSON.stringify(base),
        score_base_total: Object.values(base.components).reduce((a, b) => a + b, 0),
        score_window_mark: marks[i]!,
      };
    });
    await updateServersAfterCheckin(trx, updates);
    return () => {
      for (const [i, r] of requests.entries()) {
        scoreWindows.keep(r.serverId, { mark: marks[i]!, since: r.since, samples: windows.get(r.serverId)! });
      }
    };
  }

  async function commit(on: Database, group: Waiting[]) {
    try {
      const committed = await on.transaction().execute((trx) =>
        writeGroup(
          trx,
          group.map((g) => g.write),
        ),
      );
      committed();
      for (const g of group) g.resolve();
      return;
    } catch (err) {
      if (group.length === 1) {
        group[0]!.reject(err);
        return;
      }
    }
    for (const g of group) {
      try {
        (await on.transaction().execute((trx) => writeGroup(trx, [g.write])))();
        g.resolve();
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
    /** Resolves once the check-in is committed; rejects with the error of its own write. */
    write(write: CheckinWrite): Promise<void> {
      return new Promise((resolve, reject) => {
        queue.push({ write, resolve, reject });
        schedule();
      });
    },
  };
}
