import { type Insertable, type RawBuilder, sql, type Updateable } from 'kysely';
import type { Database, SamplesTable, ServersTable } from '../db/schema.js';
import { runCompiled, runPreparedOnPostgres } from './compiled.js';
import { isPostgres, listParameter, oneOf } from './dialect.js';
import { insertSamples, samplesInsertion } from './samples.repository.js';

/** The columns a server list needs, and no more: lists are the hottest read. */
export async function listServerSummaries(db: Database, accountId: number) {
  return runCompiled(
    db,
    'listServerSummaries',
    (d, p) =>
      d
        .selectFrom('servers')
        .select([
          'id',
          'name',
          'hostname',
          'last_seen',
          'public_ip',
          'score_base_total',
          'attacks_active',
          'last_call_ok_at',
          'last_call_error_at',
          'last_call_error',
          'tags',
        ])
        .where('account_id', '=', p.accountId)
        .orderBy('id'),
    { accountId },
  );
}

/** One of the account's servers; another account's server is indistinguishable from a missing one. */
export async function findServer(db: Database, accountId: number, id: number) {
  // Every call about one server (the metrics proxy above all) reads it: compiled once (compiled.ts).
  const rows = await runCompiled(
    db,
    'findServer',
    (d, p) => d.selectFrom('servers').selectAll().where('id', '=', p.id).where('account_id', '=', p.accountId),
    { id, accountId },
  );
  return rows[0];
}

export async function insertServer(db: Database, server: Insertable<ServersTable>) {
  return db.insertInto('servers').values(server).returningAll().executeTakeFirstOrThrow();
}

export async function updateServer(db: Database, id: number, fields: Updateable<ServersTable>) {
  await db.updateTable('servers').set(fields).where('id', '=', id).execute();
}

/** What a check-in writes on its server's row. */
export type CheckinFields = Required<
  Pick<
    Updateable<ServersTable>,
    | 'hostname'
    | 'public_ip'
    | 'facts'
    | 'agent_version'
    | 'last_seen'
    | 'latest_sample'
    | 'score_base'
    | 'score_base_total'
    | 'score_window_mark'
    | 'attacks_active'
  >
> & { id: number };

/** The columns a check-in sets on its server's row, as json_to_recordset() reads them (PostgreSQL). */
const CHECKIN_SET =
  sql.raw(`hostname = v.hostname, public_ip = v.public_ip, facts = v.facts, agent_version = v.agent_version,
      last_seen = v.last_seen, latest_sample = v.latest_sample, score_base = v.score_base,
      score_base_total = v.score_base_total, score_window_mark = v.score_window_mark,
      attacks_active = v.attacks_active`);
const CHECKIN_RECORD = sql.raw(`id bigint, hostname text, public_ip text,
      facts text, agent_version text, last_seen bigint, latest_sample text, score_base text,
      score_base_total integer, score_window_mark bigint, attacks_active integer`);

/**
 * The rows of a group of check-ins (one per server): on PostgreSQL one UPDATE … FROM unnest(…)
 * whatever the group's size, a round trip instead of one per server; on SQLite, whose statements
 * cost no round trip, one prepared UPDATE each.
 */
export async function updateServersAfterCheckin(db: Database, rows: CheckinFields[]) {
  if (!isPostgres(db)) {
    for (const r of rows) {
      await runCompiled(
        db,
        'updateServerAfterCheckin',
        (d, p) =>
          d
            .updateTable('servers')
            .set({
              hostname: p.hostname,
              public_ip: p.public_ip,
              facts: p.facts,
              agent_version: p.agent_version,
              last_seen: p.last_seen,
              latest_sample: p.latest_sample,
              score_base: p.score_base,
              score_base_total: p.score_base_total,
              score_window_mark: p.score_window_mark,
              attacks_active: p.attacks_active,
            })
            .where('id', '=', p.id),
        {
          hostname: r.hostname,
          public_ip: r.public_ip,
          facts: r.facts,
          agent_version: r.agent_version,
          last_seen: r.last_seen,
          latest_sample: r.latest_sample,
          score_base: r.score_base,
          score_base_total: r.score_base_total,
          score_window_mark: r.score_window_mark,
          attacks_active: r.attacks_active,
          id: r.id,
        },
      );
    }
    return;
  }
  if (rows.length === 0) return;
  // The rows as one JSON parameter: JSON.stringify is native, where the driver would escape each
  // element of eleven arrays in JavaScript.
  await runPreparedOnPostgres(
    db,
    sql`UPDATE servers AS s SET ${CHECKIN_SET}
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS v(${CHECKIN_RECORD})
    WHERE s.id = v.id`,
  );
}

/**
 * A group of check-ins in one statement (PostgreSQL), for servers whose score windows the writer
 * keeps (services/checkin-writer.ts): its `samples`, then each server's row,
 * only where the row still carries `expected_mark`, the mark the kept window was written with (a
 * compare-and-set: the windows were computed from the kept samples before the statement). The rows
 * are locked in id order first, as lockScoreWindowMarks() locks them; `also`, a statement that
 * commits with them (the change message). Answers the servers updated; the others' rows are left as
 * they were, their samples stored.
 */
export async function updateServersStillMarked(
  db: Database,
  rows: (CheckinFields & { expected_mark: number })[],
  samples: Insertable<SamplesTable>[],
  also: RawBuilder<unknown> | null,
): Promise<Set<number>> {
  const updated = await runPreparedOnPostgres(
    db,
    sql<{ id: number }>`WITH first AS (${samplesInsertion(samples)}),${also ? sql` also AS (${also}),` : sql``}
      locked AS MATERIALIZED (SELECT id, score_window_mark FROM servers
        WHERE id = any(${rows.map((r) => r.id)}::bigint[]) ORDER BY id FOR NO KEY UPDATE)
    UPDATE servers AS s SET ${CHECKIN_SET}
    FROM json_to_recordset(${JSON.stringify(rows)}::json) AS v(${CHECKIN_RECORD}, expected_mark bigint), locked AS l
    WHERE s.id = v.id AND l.id = v.id AND l.score_window_mark = v.expected_mark
    RETURNING s.id`,
  );
  return new Set(updated.map((r) => Number(r.id)));
}

/**
 * The score-window marks of a group's servers (services/checkin-score-windows.ts), read in the
 * group's transaction after its samples are inserted. On PostgreSQL the rows are locked, in id order,
 * so no other process's check-in of these servers commits between this read and the group's UPDATE
 * (FOR NO KEY UPDATE, the lock that UPDATE takes: it does not wait for the key-share locks of
 * other transactions' sample inserts). There the group's `samples` are inserted in the same
 * statement, which saves a round trip; SQLite inserts them before.
 */
export async function lockScoreWindowMarks(
  db: Database,
  ids: number[],
  samples: Insertable<SamplesTable>[],
): Promise<Map<number, number | null>> {
  if (!isPostgres(db)) await insertSamples(db, samples);
  const rows = isPostgres(db)
    ? await runPreparedOnPostgres(
        db,
        sql<{ id: number; score_window_mark: number | null }>`WITH first AS (${samplesInsertion(samples)})
          SELECT id, score_window_mark FROM servers
          WHERE id = any(${ids}::bigint[]) ORDER BY id FOR NO KEY UPDATE`,
      )
    : await runCompiled(
        db,
        'scoreWindowMarks',
        (d, p) =>
          d
            .selectFrom('servers')
            .select(['id', 'score_window_mark'])
            .where(oneOf(d, 'id', p.ids, 'bigint')),
        { ids: listParameter(db, ids) },
      );
  return new Map(rows.map((r) => [Number(r.id), r.score_window_mark === null ? null : Number(r.score_window_mark)]));
}

export async function deleteServer(db: Database, accountId: number, id: number) {
  const result = await db
    .deleteFrom('servers')
    .where('id', '=', id)
    .where('account_id', '=', accountId)
    .executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function countProductServers(db: Database, productId: number) {
  const row = await db
    .selectFrom('servers')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('product_id', '=', productId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The facts the agent last reported for a server (JSON text), to check a benchmark report against. */
export async function serverFactsText(db: Database, id: number): Promise<string> {
  const row = await db.selectFrom('servers').select('facts').where('id', '=', id).executeTakeFirstOrThrow();
  return row.facts;
}

export async function findServerByDaemonToken(db: Database, tokenHash: string) {
  return db
    .selectFrom('servers')
    .innerJoin('accounts', 'accounts.id', 'servers.account_id')
    .selectAll('servers')
    .where('servers.daemon_token_hash', '=', tokenHash)
    .where('accounts.disabled_at', 'is', null)
    .executeTakeFirst();
}

/** The servers (id, account, name) whose daemon tokens hash to `tokenHashes`, if their accounts are enabled (check-ins). */
export async function findServersByDaemonTokens(
  db: Database,
  tokenHashes: string[],
): Promise<Map<string, { id: number; account_id: number; name: string }>> {
  // Once a turn on the check-in path: compiled once (compiled.ts).
  const rows = await runCompiled(
    db,
    'findServersByDaemonTokens',
    (d, p) =>
      d
        .selectFrom('servers')
        .innerJoin('accounts', 'accounts.id', 'servers.account_id')
        .select(['servers.id', 'servers.account_id', 'servers.name', 'servers.daemon_token_hash'])
        .where(oneOf(d, 'servers.daemon_token_hash', p.hashes, 'text'))
        .where('accounts.disabled_at', 'is', null),
    { hashes: listParameter(db, tokenHashes) },
  );
  return new Map(
    rows.map((r) => [r.daemon_token_hash!, { id: Number(r.id), account_id: Number(r.account_id), name: r.name }]),
  );
}

/**
 * Servers of any account that checked in after `since`, the ones whose agent answered the console
 * longest ago first (never, or failing since then, first of all): the recheck's round (services/servers/recheck.ts).
 */
export async function listServersToRecheck(db: Database, since: number, limit: number) {
  return db
    .selectFrom('servers')
    .selectAll()
    .where('last_seen', '>', since)
    .orderBy(sql`coalesce(last_call_ok_at, 0)`)
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** Each of an account's servers with its newest sample (JSON), for the fleet's "now" columns. */
export async function latestSamples(db: Database, accountId: number) {
  return db
    .selectFrom('servers')
    .select(['id', 'latest_sample', 'last_seen'])
    .where('account_id', '=', accountId)
    .execute();
}

/** Whose a server is and its name, whichever account asks (for the audit log, which files it under its owner). */
export async function findServerOwner(db: Database, id: number) {
  return db.selectFrom('servers').select(['id', 'account_id', 'name']).where('id', '=', id).executeTakeFirst();
}
