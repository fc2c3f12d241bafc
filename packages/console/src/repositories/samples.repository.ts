import type { Insertable } from 'kysely';
import type { Database, SamplesTable } from '../db/schema.js';

export async function insertSample(db: Database, sample: Insertable<SamplesTable>) {
  await db.insertInto('samples').values(sample).execute();
}

export async function rawSamplesSince(db: Database, serverId: number, since: number) {
  return db
    .selectFrom('samples')
    .selectAll()
    .where('server_id', '=', serverId)
    .where('resolution', '=', 'raw')
    .where('ts', '>', since)
    .orderBy('ts')
    .execute();
}

/** Every stored sample of a server in a time range, whatever its resolution, oldest first. */
export async function samplesBetween(db: Database, serverId: number, from: number, to: number) {
  return db
    .selectFrom('samples')
    .selectAll()
    .where('server_id', '=', serverId)
    .where('ts', '>=', from)
    .where('ts', '<=', to)
    .orderBy('ts')
    .execute();
}

export async function samplesOlderThan(
  db: Database,
  resolution: SamplesTable['resolution'],
  before: number,
  limit: number,
) {
  return db
    .selectFrom('samples')
    .selectAll()
    .where('resolution', '=', resolution)
    .where('ts', '<', before)
    .orderBy('server_id')
    .orderBy('ts')
    .limit(limit)
    .execute();
}

export async function deleteSamples(db: Database, ids: number[]) {
  if (ids.length === 0) return;
  await db.deleteFrom('samples').where('id', 'in', ids).execute();
}

export async function deleteSamplesOlderThan(db: Database, resolution: SamplesTable['resolution'], before: number) {
  await db.deleteFrom('samples').where('resolution', '=', resolution).where('ts', '<', before).execute();
}
