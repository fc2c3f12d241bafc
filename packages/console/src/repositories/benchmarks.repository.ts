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
