import type { Insertable, Updateable } from 'kysely';
import type { BenchmarkRunRow, BenchmarkRunsTable, Database } from '../db/schema.js';
import { runCompiled } from './compiled.js';
import { listParameter, oneOf } from './dialect.js';

/** Finished runs of a server, newest first. */
export async function listDoneRuns(db: Database, serverId: number) {
  return db
    .selectFrom('benchmark_runs')
    .select([
      'id',
      'label',
      'status',
      'score_cpu',
      'score_disk',
      'score_network',
      'score_stability',
      'score_total',
      'verified',
      'finished_at',
    ])
    .where('server_id', '=', serverId)
    .where('status', '=', 'done')
    .orderBy('finished_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** Every run of a server for the dashboard, newest first, log included. */
export async function listRuns(db: Database, serverId: number, limit = 50) {
  return db
    .selectFrom('benchmark_runs')
    .selectAll()
    .where('server_id', '=', serverId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}

export async function insertRun(db: Database, run: Insertable<BenchmarkRunsTable>) {
  return db.insertInto('benchmark_runs').values(run).returningAll().executeTakeFirstOrThrow();
}

export async function findActiveRun(db: Database, serverId: number) {
  return db
    .selectFrom('benchmark_runs')
    .select(['id', 'status'])
    .where('server_id', '=', serverId)
    .where('status', 'in', ['pending', 'running'])
    .executeTakeFirst();
}

/** The pending runs of `serverIds` not handed out since `handedBefore`, by server (asked at check-ins). */
export async function runsToHandOut(db: Database, serverIds: number[], handedBefore: number) {
  // Once a turn on the check-in path: compiled once (compiled.ts).
  const rows = await runCompiled(
    db,
    'runsToHandOut',
    (d, p) =>
      d
        .selectFrom('benchmark_runs')
        // The columns a hand-out needs, named: a statement without `*` is prepared on PostgreSQL.
        .select(['id', 'server_id', 'label'])
        .where(oneOf(d, 'server_id', p.serverIds, 'bigint'))
        .where('status', '=', p.pending)
        .where((eb) => eb.or([eb('handed_at', 'is', null), eb('handed_at', '<', p.handedBefore)]))
        .orderBy('id'),
    { serverIds: listParameter(db, serverIds), pending: 'pending' as const, handedBefore },
  );
  const byServer = new Map<number, (typeof rows)[number][]>();
  for (const row of rows) byServer.set(Number(row.server_id), [...(byServer.get(Number(row.server_id)) ?? []), row]);
  return byServer;
}

export async function findRunByToken(db: Database, tokenHash: string) {
  return db.selectFrom('benchmark_runs').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/** Updates a run only while it is still in `expected` status; false when it moved on meanwhile. */
export async function updateRunIf(
  db: Database,
  id: number,
  expected: BenchmarkRunRow['status'][],
  fields: Updateable<BenchmarkRunsTable>,
) {
  const result = await db
    .updateTable('benchmark_runs')
    .set(fields)
    .where('id', '=', id)
    .where('status', 'in', expected)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function staleRuns(db: Database, pendingBefore: number, quietBefore: number) {
  return db
    .selectFrom('benchmark_runs')
    .select(['id', 'status'])
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'pending'), eb('created_at', '<', pendingBefore)]),
        eb.and([eb('status', '=', 'running'), eb('updated_at', '<', quietBefore)]),
      ]),
    )
    .execute();
}
