import type { BenchmarkRun, ServerDetail, ServerSummary } from '@palisade/protocol';
import type { Database, ServerRow } from '../db/schema.js';
import { notFound } from '../errors.js';
import { parseJson } from '../json.js';
import { listDoneRuns } from '../repositories/benchmarks.repository.js';
import { findServer, listServerSummaries } from '../repositories/servers.repository.js';
import { type ScoreBase, serverScore, serverScoreTotal } from './score.js';

/** A server counts as online for two minutes after its last check-in. */
export const ONLINE_WINDOW_MS = 120_000;

/** One of the account's servers, or 404: another account's server answers like a missing one. */
export async function requireOwnServer(db: Database, accountId: number, id: number): Promise<ServerRow> {
  const row = await findServer(db, accountId, id);
  if (!row) throw notFound('server');
  return row;
}

type SummaryRow = Pick<ServerRow, 'id' | 'name' | 'hostname' | 'last_seen' | 'public_ip' | 'score_base_total'>;

export function serverSummary(row: SummaryRow, now: number): ServerSummary {
  return {
    id: row.id,
    label: row.name,
    // `hostname` is a string in the v1 shape; until the agent reports one, the server's name stands in
    // (never the agent address, which stays on the console: docs/decisions.md).
    hostname: row.hostname ?? row.name,
    online: row.last_seen !== null && now - row.last_seen < ONLINE_WINDOW_MS,
    score: serverScoreTotal(row.last_seen, row.score_base_total, now),
    last_seen: row.last_seen ?? 0,
    public_ip: row.public_ip,
  };
}

export function serverDetail(row: ServerRow, now: number): ServerDetail {
  const score = serverScore(row.last_seen, parseJson<ScoreBase | null>(row.score_base, null), now);
  return {
    ...serverSummary(row, now),
    score: score.score,
    created_at: row.created_at,
    facts: parseJson<Record<string, unknown>>(row.facts, {}),
    score_components: score.components,
    score_notes: score.notes,
    latest_sample: parseJson<ServerDetail['latest_sample']>(row.latest_sample, null),
  };
}

export function createFleetService({ db, clock }: { db: Database; clock: () => number }) {
  const requireServer = (accountId: number, id: number) => requireOwnServer(db, accountId, id);

  return {
    requireServer,

    async list(accountId: number): Promise<ServerSummary[]> {
      const now = clock();
      return (await listServerSummaries(db, accountId)).map((row) => serverSummary(row, now));
    },

    async detail(accountId: number, id: number): Promise<ServerDetail> {
      return serverDetail(await requireServer(accountId, id), clock());
    },

    /** Finished runs only, newest first; never the log or the run token. */
    async doneBenchmarks(accountId: number, serverId: number): Promise<BenchmarkRun[]> {
      await requireServer(accountId, serverId);
      return (await listDoneRuns(db, serverId)).map((run) => ({
        id: run.id,
        label: run.label,
        status: 'done' as const,
        scores: {
          cpu: run.score_cpu,
          disk: run.score_disk,
          network: run.score_network,
          stability: run.score_stability,
          total: run.score_total,
        },
        verified: run.verified === 1,
        finished_at: run.finished_at ?? 0,
      }));
    },
  };
}

export type FleetService = ReturnType<typeof createFleetService>;
