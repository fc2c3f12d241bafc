import { type Insertable, type Selectable, sql } from 'kysely';
import type { Database, SamplesTable } from '../db/schema.js';
import { runCompiled } from './compiled.js';
import { isPostgres } from './dialect.js';

export async function insertSample(db: Database, sample: Insertable<SamplesTable>) {
  await db.insertInto('samples').values(sample).execute();
}

/** A sample's columns in the order of the statements below, with their PostgreSQL types. */
const SAMPLE_COLUMNS = [
  ['server_id', 'bigint'],
  ['resolution', 'text'],
  ['ts', 'bigint'],
  ['cpu_pct', 'real'],
  ['mem_used_mb', 'real'],
  ['mem_total_mb', 'real'],
  ['disk_used_pct', 'real'],
  ['load1', 'real'],
  ['rx_bps', 'real'],
  ['tx_bps', 'real'],
  ['extra', 'text'],
] as const;

/**
 * Many samples (a group of check-ins committed together): on PostgreSQL one INSERT … SELECT FROM
 * json_to_recordset(…), a statement of the same text whatever the group's size; on
 * SQLite, where a statement costs no round trip, one prepared single-row INSERT each (no query
 * built per row).
 */
export async function insertSamples(db: Database, samples: Insertable<SamplesTable>[]) {
  if (samples.length === 0) return;
  if (isPostgres(db)) {
    await samplesInsertion(samples).execute(db);
    return;
  }
  for (const s of samples) {
    await runCompiled(
      db,
      'insertSample',
      (d, p) => d.insertInto('samples').values(p as Insertable<SamplesTable>),
      Object.fromEntries(SAMPLE_COLUMNS.map(([c]) => [c, s[c]])),
    );
  }
}

/** The record type of PostgreSQL's json_to_recordset() for a sample. */
const SAMPLE_RECORD = sql.raw(SAMPLE_COLUMNS.map(([c, type]) => `${c} ${type}`).join(', '));
const SAMPLE_COLUMN_LIST = sql.raw(SAMPLE_COLUMNS.map(([c]) => c).join(', '));

/**
 * PostgreSQL's INSERT of insertSamples(), to run alone or as part of another statement: the rows
 * as one JSON parameter (JSON.stringify is native, where the driver would escape each element of
 * eleven arrays in JavaScript).
 */
export function samplesInsertion(samples: Insertable<SamplesTable>[]) {
  return sql`INSERT INTO samples (${SAMPLE_COLUMN_LIST})
    SELECT ${SAMPLE_COLUMN_LIST} FROM json_to_recordset(${JSON.stringify(samples)}::json) AS v(${SAMPLE_RECORD})`;
}

/** The timestamps of a server's raw samples among `ts` (to skip ones an agent sends twice). */
export async function rawSampleTimes(db: Database, serverId: number, ts: number[]): Promise<Set<number>> {
  if (ts.length === 0) return new Set();
  const rows = await db
    .selectFrom('samples')
    .select('ts')
    .where('server_id', '=', serverId)
    .where('resolution', '=', 'raw')
    .where('ts', 'in', ts)
    .execute();
  return new Set(rows.map((r) => Number(r.ts)));
}

/** The columns the score reads from a sample. */
const SCORE_WINDOW_COLUMNS = [
  'server_id',
  'ts',
  'cpu_pct',
  'mem_used_mb',
  'mem_total_mb',
  'disk_used_pct',
  'load1',
  'extra',
] as const;
export type ScoreWindowRow = Pick<Selectable<SamplesTable>, (typeof SCORE_WINDOW_COLUMNS)[number]>;

/**
 * The score windows of a group of check-ins in one query: for each server, its raw samples newer
 * than its `since`, at most the `limit` newest (each an index walk that stops there).
 */
export async function scoreWindows(db: Database, windows: { serverId: number; since: number }[], limit: number) {
  const rows = new Map<number, ScoreWindowRow[]>(windows.map((w) => [w.serverId, []]));
  if (windows.length === 0) return rows;
  const columns = sql.join(SCORE_WINDOW_COLUMNS.map((c) => sql.ref(c)));
  // PostgreSQL: one statement of fixed text whatever the group's size (planned once, not once per
  // server); SQLite, which has no LATERAL, gets one subquery per server (its statements are cached).
  const found = isPostgres(db)
    ? await sql<ScoreWindowRow>`SELECT s.* FROM unnest(${windows.map((w) => w.serverId)}::bigint[],
          ${windows.map((w) => w.since)}::bigint[]) AS w(server_id, since)
        CROSS JOIN LATERAL (SELECT ${columns} FROM samples
          WHERE samples.server_id = w.server_id AND resolution = 'raw' AND ts > w.since
          ORDER BY ts DESC LIMIT ${sql.lit(limit)}) s`.execute(db)
    : await sql<ScoreWindowRow>`${sql.join(
        windows.map(
          (w, i) => sql`SELECT * FROM (SELECT ${columns} FROM samples
            WHERE server_id = ${w.serverId} AND resolution = 'raw' AND ts > ${w.since}
            ORDER BY ts DESC LIMIT ${sql.lit(limit)}) ${sql.raw(`w${i}`)}`,
        ),
        sql` UNION ALL `,
      )}`.execute(db);
  for (const row of found.rows) rows.get(Number(row.server_id))?.push({ ...row, ts: Number(row.ts) });
  return rows;
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

/**
 * The average CPU of each of an account's servers per `bucketMs` since `since`, from raw samples:
 * one grouped query for the whole fleet (the fleet page's sparklines, docs/fleet.md "Fleet trends").
 */
export async function fleetCpuBuckets(db: Database, accountId: number, since: number, bucketMs: number) {
  const bucket = sql<number>`${sql.ref('samples.ts')} / ${sql.lit(bucketMs)}`;
  const rows = await db
    .selectFrom('samples')
    .innerJoin('servers', 'servers.id', 'samples.server_id')
    .select([
      'samples.server_id as server_id',
      bucket.as('bucket'),
      (eb) => eb.fn.avg<number | string>('samples.cpu_pct').as('cpu'),
    ])
    .where('servers.account_id', '=', accountId)
    .where('samples.resolution', '=', 'raw')
    .where('samples.ts', '>=', since)
    .groupBy(['samples.server_id', bucket])
    .execute();
  return rows.map((r) => ({ server_id: Number(r.server_id), bucket: Number(r.bucket), cpu: Number(r.cpu) }));
}
