import type { Database } from '../db/schema.js';

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
