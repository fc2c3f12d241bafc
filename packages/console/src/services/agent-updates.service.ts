import {
  DEFAULT_ROLLOUT_WAVES,
  formatRolloutWaves,
  parseRolloutWaves,
  type Rollout,
  type RolloutServer,
  rolloutWaveReach,
  type StartRolloutRequest,
  UPDATE_HEALTH_TIMEOUT_DEFAULT_S,
  UPDATE_SERVER_STATES,
  type UpdateOffer,
  type UpdateReport,
  type UpdateServerState,
} from '@palisade/protocol';
import { CONSOLE_VERSION, type ConsoleConfig } from '../config.js';
import type { AuditLogTable, Database } from '../db/schema.js';
import { badRequest, conflict, isUniqueViolation, notFound } from '../errors.js';
import { readReleaseKey, servedAgentVersion } from '../release-key.js';
import {
  countOpenInWave,
  countOutdatedServers,
  countRolloutServers,
  findRollout,
  findRolloutServer,
  findRunningRollout,
  findRunningRollouts,
  finishRollout,
  insertRollout,
  insertRolloutServers,
  listRolloutServers,
  listRollouts,
  listRunningRollouts,
  rolloutCandidates,
  setRolloutServers,
} from '../repositories/agent-rollouts.repository.js';
import { requirePermission } from './accounts.service.js';
import { createRolloutWaves, IN_FLIGHT, type RolloutRow, waveCount } from './agent-updates/waves.js';
import type { AuditService } from './audit.service.js';
import { createBatchLoader } from './batch-loader.js';
import type { NotificationsService } from './notifications.service.js';
import { serverTags } from './servers/index.js';

/** Who started or cancelled a rollout, as the audit log names them. */
export interface UpdateActor {
  accountId: number;
  permissions: string;
  kind: AuditLogTable['actor_kind'];
  id: number | null;
  label: string;
  ip: string | null;
}

/** The newest rollouts `GET /api/agent-updates` lists. */
const LISTED_ROLLOUTS = 50;

/** What an agent's report may move its row from: each step only forward, a repeated report changes nothing. */
const REPORT_FROM: Record<UpdateReport['state'], UpdateServerState[]> = {
  downloading: ['offered'],
  applying: ['offered', 'downloading'],
  updated: IN_FLIGHT,
  rolled_back: IN_FLIGHT,
  failed: IN_FLIGHT,
};

const oneLine = (text: string, max = 300) => text.replace(/[\r\n\t]+/g, ' ').slice(0, max);

/**
 * Agent updates staged in waves (docs/fleet.md, "Agent updates"): starting and cancelling a
 * rollout, the offer in each check-in answer and the agent's reports, and advancing the waves. Every
 * step that several console processes might take at once is a compare-and-set on the rollout's
 * `state` and `current_wave` or on the server row's `state`, so each wave starts once and each
 * failure is alerted once.
 */
export function createAgentUpdatesService(deps: {
  db: Database;
  clock: () => number;
  config: Pick<ConsoleConfig, 'artifactsDir'>;
  audit: Pick<AuditService, 'fleet'>;
  notifications: Pick<NotificationsService, 'enqueueAlerts'>;
}) {
  const { db, clock, config } = deps;
  const { log, offerWave, advanceRollout } = createRolloutWaves(deps);
  /** The account's running rollout at a check-in: one indexed read for all the check-ins of a turn. */
  const runningOf = createBatchLoader((accountIds: number[]) => findRunningRollouts(db, accountIds));

  /** The version this console serves (SHA256SUMS), whether there are packages at all, and whether they are signed. */
  function release() {
    const { version, listed } = servedAgentVersion(config.artifactsDir, CONSOLE_VERSION);
    let signed = false;
    try {
      signed = listed && readReleaseKey(config.artifactsDir) !== null;
    } catch {
      signed = false;
    }
    return { version: listed ? version : null, signed };
  }

  async function views(rows: RolloutRow[]): Promise<Rollout[]> {
    const counts = await countRolloutServers(
      db,
      rows.map((r) => Number(r.id)),
    );
    return rows.map((row) => {
      const tally = Object.fromEntries(UPDATE_SERVER_STATES.map((s) => [s, 0])) as Record<UpdateServerState, number>;
      for (const c of counts) if (Number(c.rollout_id) === Number(row.id)) tally[c.state] = Number(c.n);
      return {
        id: Number(row.id),
        version: row.version,
        tag: row.tag,
        waves: row.waves,
        health_timeout_s: Number(row.health_timeout_s),
        state: row.state,
        current_wave: Number(row.current_wave),
        wave_count: waveCount(row),
        reason: row.reason,
        counts: tally,
        created_at: Number(row.created_at),
        finished_at: row.finished_at === null ? null : Number(row.finished_at),
      };
    });
  }
  const view = async (row: RolloutRow) => (await views([row]))[0]!;

  return {
    /** `GET /api/agent-updates`. */
    async list(actor: Pick<UpdateActor, 'accountId' | 'permissions'>) {
      requirePermission(actor, 'control.read');
      const { version, signed } = release();
      const rows = (await listRollouts(db, actor.accountId, LISTED_ROLLOUTS)) as RolloutRow[];
      return {
        served_version: version,
        signed,
        outdated: version === null ? 0 : await countOutdatedServers(db, actor.accountId, version),
        rollouts: await views(rows),
      };
    },

    /** `GET /api/agent-updates/{id}`: the rollout and every server in it, by wave and id. */
    async get(actor: Pick<UpdateActor, 'accountId' | 'permissions'>, id: number) {
      requirePermission(actor, 'control.read');
      const row = (await findRollout(db, actor.accountId, id)) as RolloutRow | undefined;
      if (!row) throw notFound('rollout');
      const servers: RolloutServer[] = (await listRolloutServers(db, id)).map((s) => ({
        server_id: Number(s.server_id),
        name: s.name,
        wave: Number(s.wave),
        state: s.state,
        from_version: s.from_version,
        agent_version: s.agent_version,
        reason: s.reason,
        updated_at: Number(s.updated_at),
      }));
      return { rollout: await view(row), servers };
    },

    /**
     * `POST /api/agent-updates`: a rollout of the served version to the account's servers (those with
     * `tag`) that run another, in waves; the first wave is offered at once.
     */
    async start(actor: UpdateActor, input: StartRolloutRequest, request: { method: string; path: string }) {
      requirePermission(actor, 'control.edit');
      const parsed = parseRolloutWaves(input.waves ?? DEFAULT_ROLLOUT_WAVES);
      if ('error' in parsed) throw badRequest(parsed.error);
      const { version, signed } = release();
      if (version === null) {
        throw conflict(
          `no agent packages to roll out: put a release (SHA256SUMS and the palisade-agent files, as npm run package writes them) in ${config.artifactsDir}, then start the update again`,
        );
      }
      if (!signed) {
        throw conflict(
          `the agent ${version} this console serves is unsigned, and agents refuse unsigned updates: build the release with npm run package -- --sign-key FILE, then start the update again`,
        );
      }
      const running = await findRunningRollout(db, actor.accountId);
      if (running) {
        throw conflict(
          `rollout ${running.id} to ${running.version} is still running: wait for it to end or cancel it (POST /api/agent-updates/${running.id}/cancel)`,
        );
      }
      const tag = input.tag ?? null;
      const servers = (await rolloutCandidates(db, actor.accountId)).filter(
        (s) => s.agent_version !== version && (tag === null || serverTags(s.tags).includes(tag)),
      );
      if (servers.length === 0) {
        throw conflict(
          `nothing to update: every server${tag === null ? '' : ` tagged ${tag}`} already runs agent ${version}`,
        );
      }
      const healthTimeout = input.health_timeout_s ?? UPDATE_HEALTH_TIMEOUT_DEFAULT_S;
      const now = clock();
      let row: RolloutRow;
      try {
        row = await db.transaction().execute(async (trx) => {
          const inserted = (await insertRollout(trx, {
            account_id: actor.accountId,
            version,
            tag,
            waves: formatRolloutWaves(parsed.waves),
            health_timeout_s: healthTimeout,
            state: 'running',
            current_wave: 0,
            reason: null,
            created_by: actor.label,
            created_at: now,
            finished_at: null,
          })) as RolloutRow;
          let wave = 0;
          await insertRolloutServers(
            trx,
            servers.map((s, i) => {
              while (i >= rolloutWaveReach(parsed.waves, wave, servers.length)) wave += 1;
              return {
                rollout_id: Number(inserted.id),
                server_id: Number(s.id),
                wave,
                state: 'pending' as const,
                from_version: s.agent_version,
                reason: null,
                offered_at: null,
                updated_at: now,
              };
            }),
          );
          await offerWave(trx, inserted, 0, now);
          return inserted;
        });
      } catch (err) {
        // Another request started one between the check above and this insert (agent_rollouts_running).
        if (isUniqueViolation(err))
          throw conflict('another rollout is already running: wait for it to end or cancel it');
        throw err;
      }
      await log(
        actor.accountId,
        'agent_update.start',
        actor,
        actor.ip,
        `rollout ${row.id} to ${version}${tag === null ? '' : ` (tag ${tag})`}: ${servers.length} servers, waves ${row.waves}, health timeout ${healthTimeout} s`,
        { ...request, status: 201 },
      );
      await advanceRollout(row);
      return view(((await findRollout(db, actor.accountId, Number(row.id))) as RolloutRow | undefined) ?? row);
    },

    /** `POST /api/agent-updates/{id}/cancel`: servers not yet offered are skipped; those offered finish on their own. */
    async cancel(actor: UpdateActor, id: number, request: { method: string; path: string }) {
      requirePermission(actor, 'control.edit');
      const row = (await findRollout(db, actor.accountId, id)) as RolloutRow | undefined;
      if (!row) throw notFound('rollout');
      const now = clock();
      const cancelled = await db.transaction().execute(async (trx) => {
        const reason = `cancelled by ${actor.label}`;
        if (!(await finishRollout(trx, id, { state: 'cancelled', reason, finished_at: now }))) return false;
        await setRolloutServers(
          trx,
          id,
          { from: ['pending'] },
          { state: 'skipped', reason: 'cancelled', updated_at: now },
        );
        return true;
      });
      if (!cancelled) throw conflict(`rollout ${id} is ${row.state} already: only a running rollout can be cancelled`);
      await log(
        actor.accountId,
        'agent_update.cancel',
        actor,
        actor.ip,
        `rollout ${id} to ${row.version} cancelled`,
        request,
      );
      return view((await findRollout(db, actor.accountId, id)) as RolloutRow);
    },

    /**
     * At each check-in, after it is stored: records the agent's report, marks the server `updated`
     * when it runs the rollout's version, advances the rollout when a server's state ended, and
     * answers the offer while the server is `offered`. Without a report and without a running
     * rollout on the account this is one indexed read, shared by the check-ins of one turn.
     */
    async checkedIn(
      server: { id: number; account_id: number },
      agentVersion: string,
      report: UpdateReport | undefined,
    ): Promise<UpdateOffer | undefined> {
      const serverId = Number(server.id);
      const now = clock();
      /** Whether this check-in ended the server's part, and how. */
      let ended: UpdateServerState | null = null;
      if (report) {
        // A report about any rollout of this server's: one cancelled or failed meanwhile still shows how its servers ended.
        const row = await findRolloutServer(db, report.rollout_id, serverId);
        if (row) {
          const moved = await setRolloutServers(
            db,
            report.rollout_id,
            { serverIds: [serverId], from: REPORT_FROM[report.state] },
            {
              state: report.state,
              reason: report.reason === null ? null : oneLine(report.reason),
              updated_at: now,
            },
          );
          if (moved > 0 && (report.state === 'updated' || report.state === 'rolled_back' || report.state === 'failed'))
            ended = report.state;
        }
      }
      const running = (await runningOf(Number(server.account_id))) as RolloutRow | undefined;
      if (!running) return undefined;
      const row = await findRolloutServer(db, Number(running.id), serverId);
      if (!row) return undefined;
      let state = row.state;
      if (agentVersion === running.version && IN_FLIGHT.includes(state)) {
        const moved = await setRolloutServers(
          db,
          Number(running.id),
          { serverIds: [serverId], from: IN_FLIGHT },
          { state: 'updated', reason: null, updated_at: now },
        );
        if (moved > 0) {
          ended = 'updated';
          state = 'updated';
        }
      }
      // A failure fails the rollout now. An update moves it on only when it closed the current wave:
      // one indexed count, not a read of every server, for all but the wave's last check-in.
      if (
        ended !== null &&
        (ended !== 'updated' || (await countOpenInWave(db, Number(running.id), Number(running.current_wave))) === 0)
      )
        await advanceRollout(running);
      if (state !== 'offered') return undefined;
      const v = running.version;
      return {
        rollout_id: Number(running.id),
        version: v,
        sums_path: '/install/SHA256SUMS',
        signature_path: '/install/SHA256SUMS.sig',
        exe_path: `/install/palisade-agent-${v}-linux-x64`,
        mjs_path: `/install/palisade-agent-${v}.mjs`,
        health_timeout_s: Number(running.health_timeout_s),
      };
    },

    /** The periodic round (server.ts): timeouts, and waves another process's check-in did not move on. */
    async advance() {
      const rows = (await listRunningRollouts(db)) as RolloutRow[];
      for (const row of rows) await advanceRollout(row);
      return { rollouts: rows.length };
    },
  };
}

export type AgentUpdatesService = ReturnType<typeof createAgentUpdatesService>;
