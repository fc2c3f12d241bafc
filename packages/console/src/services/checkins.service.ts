import {
  type CheckinAnswer,
  type CheckinBan,
  type CheckinBansOutcome,
  type CheckinSample,
  hashToken,
  isWellFormedToken,
  parseCheckinRequest,
  type UpdateOffer,
  type UpdateReport,
} from '@palisade/protocol';
import type { ConsoleConfig } from '../config.js';
import type { Database, SampleRow } from '../db/schema.js';
import { badRequest, unauthorized } from '../errors.js';
import {
  deleteSamples,
  deleteSamplesOlderThan,
  insertSample,
  samplesOlderThan,
} from '../repositories/samples.repository.js';
import { findServersByDaemonTokens } from '../repositories/servers.repository.js';
import { createBatchLoader } from './batch-loader.js';
import { createCheckinWriter } from './checkin-writer.js';
import type { Coherence } from './coherence/index.js';

/** How far an agent's clock may be off before the console's own receive time is used instead. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** A check-in sample as a `samples` row: the eight figures in columns, the rest as `extra` JSON. */
function sampleRow(sample: CheckinSample, ts: number) {
  const { ts: _ts, cpu_pct, mem_used_mb, mem_total_mb, disk_used_pct, load1, rx_bps, tx_bps, ...extra } = sample;
  return {
    ts,
    cpu_pct,
    mem_used_mb,
    mem_total_mb,
    disk_used_pct,
    load1,
    rx_bps,
    tx_bps,
    extra: JSON.stringify(extra),
  };
}

/** The sample's `attacks_active` (docs/fleet.md, "Server states"), or null when the agent did not send a count. */
function activeAttacks(value: unknown): number | null {
  return typeof value === 'number' && value >= 0 ? Math.min(Math.round(value), 2 ** 31 - 1) : null;
}

/** The update offer a check-in answers, after recording the agent's report (agent-updates.service.ts). */
export type UpdateSource = (
  server: { id: number; account_id: number },
  agentVersion: string,
  report: UpdateReport | undefined,
) => Promise<UpdateOffer | undefined>;

/** Jobs handed to an agent in the check-in answer (benchmarks.service.ts, jobsFor: pending runs). */
export type JobSource = (serverId: number) => Promise<CheckinAnswer['jobs']>;

/**
 * Told of each check-in once it is stored, with the bans it reported (fleet-protection/index.ts,
 * checkedIn); may answer what became of the bans, which the check-in's answer carries (`bans`).
 */
export type CheckinListener = (
  server: { id: number; account_id: number; name: string },
  bans: CheckinBan[],
) => Promise<CheckinBansOutcome | undefined>;

export function createCheckinsService({
  db,
  clock,
  config,
  changes,
  jobsFor,
  checkedIn,
  updateFor,
}: {
  db: Database;
  clock: () => number;
  config: Pick<ConsoleConfig, 'checkinIntervalS' | 'retention'>;
  /** A check-in changes the account's v1 answers: published after the commit. */
  changes: Pick<Coherence, 'changed' | 'dataChangesWith' | 'announced'>;
  /** The jobs a check-in's answer hands the agent. */
  jobsFor: JobSource;
  /** Each stored check-in and the bans it reported. */
  checkedIn: CheckinListener;
  /** The agent update this check-in's answer offers, if any. */
  updateFor: UpdateSource;
}) {
  // The change message of a group written in one statement goes out with its commit (PostgreSQL).
  const writer = createCheckinWriter(db, { announce: (accounts) => changes.dataChangesWith(accounts) });
  const serverOfToken = createBatchLoader((hashes: string[]) => findServersByDaemonTokens(db, hashes));

  return {
    /**
     * Stores facts and the sample, refreshes the score, and answers the interval and pending jobs.
     * The write is group-committed with other check-ins (checkin-writer.ts) and done before the answer.
     */
    async checkin(rawToken: string, body: unknown) {
      if (!isWellFormedToken('daemon', rawToken)) throw unauthorized('invalid daemon token');
      const server = await serverOfToken(hashToken(rawToken));
      if (server === undefined) throw unauthorized('invalid daemon token');
      if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
        throw badRequest('body: expected a JSON object');
      }
      const parsed = parseCheckinRequest(body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        throw badRequest(`${issue.path.join('.') || 'body'}: ${issue.message}`);
      }
      const input = parsed.data;
      const now = clock();
      const ts = Math.abs(input.sample.ts - now) <= CLOCK_SKEW_MS ? input.sample.ts : now;
      const sample = sampleRow(input.sample, ts);
      const cores = typeof input.facts.cores === 'number' ? input.facts.cores : 1;

      // Samples from an outage keep their own time, if it is within raw retention and not ahead of the
      // console; others are skipped (not refused, so one bad clock reading cannot block check-ins).
      const oldest = now - config.retention.rawHours * 3600_000;
      const past = (input.past_samples ?? []).filter(
        (p) => p.ts >= oldest && p.ts <= now + CLOCK_SKEW_MS && p.ts !== ts,
      );

      const announced = await writer.write({
        serverId: server.id,
        accountId: server.account_id,
        sample,
        past: past.map((p) => sampleRow(p, p.ts)),
        cores,
        fields: {
          hostname: input.hostname,
          public_ip: input.public_ip ?? null,
          facts: JSON.stringify(input.facts),
          agent_version: input.agent_version,
          last_seen: now,
          latest_sample: JSON.stringify({ ...input.sample, ts }),
          attacks_active: activeAttacks(input.sample.attacks_active),
        },
      });
      // After the commit, side by side: each is batched over the check-ins of a turn, so together
      // they cost one turn and, on PostgreSQL, one round trip instead of four in a row
      // (docs/decisions.md, "One statement a group on PostgreSQL").
      const [, bans, jobs, update] = await Promise.all([
        announced ? changes.announced(server.account_id) : changes.changed(server.account_id, 'data'),
        checkedIn(server, input.bans ?? []),
        jobsFor(server.id),
        updateFor(server, input.agent_version, input.update),
      ]);
      const answer: CheckinAnswer = {
        interval_s: config.checkinIntervalS,
        jobs,
        ...(bans ? { bans } : {}),
        ...(update ? { update } : {}),
      };
      return answer;
    },

    /** The writer's groups written in one statement (checkin-writer.ts), for tests and metrics. */
    writerStats: () => writer.stats(),

    /** Raw samples become 5-minute averages after a day, those become hourly ones after a week; hourly ones expire. */
    async rollupSamples(): Promise<{ rolled: number; expired: boolean }> {
      const now = clock();
      const { rawHours, fiveMinuteDays, hourlyDays } = config.retention;
      let rolled = 0;
      rolled += await rollup('raw', '5m', 5 * 60_000, now - rawHours * 3600_000);
      rolled += await rollup('5m', '1h', 3600_000, now - fiveMinuteDays * 86_400_000);
      await deleteSamplesOlderThan(db, '1h', now - hourlyDays * 86_400_000);
      return { rolled, expired: true };
    },
  };

  async function rollup(
    from: SampleRow['resolution'],
    to: SampleRow['resolution'],
    bucketMs: number,
    olderThan: number,
  ) {
    const cutoff = Math.floor(olderThan / bucketMs) * bucketMs; // whole buckets only
    let total = 0;
    for (;;) {
      const batch = await samplesOlderThan(db, from, cutoff, 5000);
      if (batch.length === 0) return total;
      const groups = new Map<string, SampleRow[]>();
      for (const row of batch) {
        const key = `${row.server_id}:${Math.floor(row.ts / bucketMs) * bucketMs}`;
        const group = groups.get(key);
        if (group) group.push(row);
        else groups.set(key, [row]);
      }
      await db.transaction().execute(async (trx) => {
        for (const [key, rows] of groups) {
          const [serverId, bucket] = key.split(':').map(Number) as [number, number];
          const mean = (pick: (r: SampleRow) => number) => rows.reduce((a, r) => a + pick(r), 0) / rows.length;
          await insertSample(trx, {
            server_id: serverId,
            ts: bucket,
            resolution: to,
            cpu_pct: mean((r) => r.cpu_pct),
            mem_used_mb: mean((r) => r.mem_used_mb),
            mem_total_mb: mean((r) => r.mem_total_mb),
            disk_used_pct: Math.max(...rows.map((r) => r.disk_used_pct)),
            load1: mean((r) => r.load1),
            rx_bps: mean((r) => r.rx_bps),
            tx_bps: mean((r) => r.tx_bps),
            extra: JSON.stringify({ samples: rows.length }),
          });
        }
        await deleteSamples(
          trx,
          batch.map((r) => r.id),
        );
      });
      total += batch.length;
    }
  }
}

export type CheckinsService = ReturnType<typeof createCheckinsService>;
