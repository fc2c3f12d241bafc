import { ONLINE_WINDOW_MS, parseRolloutWaves, type UpdateServerState } from '@palisade/protocol';
import type { AgentRolloutsTable, AuditLogTable, Database } from '../../db/schema.js';
import {
  confirmedChannels,
  finishRollout,
  listRolloutServers,
  moveRolloutWave,
  setRolloutServers,
} from '../../repositories/agent-rollouts.repository.js';
import { accountsWithWebhook } from '../../repositories/notifications.repository.js';
import type { AuditService } from '../audit.service.js';
import type { NotificationsService } from '../notifications.service.js';

export type RolloutRow = AgentRolloutsTable & { id: number };

/** The console's own doings (waves, failures, completion) in the audit log. */
const CONSOLE_ACTOR = { kind: 'console' as const, id: null, label: 'the console' };

/** A server offered the update has this long past the health timeout to report `updated`, else the rollout fails. */
export const UPDATE_REPORT_SLACK_S = 300;

export const IN_FLIGHT: UpdateServerState[] = ['offered', 'downloading', 'applying'];
const DONE: UpdateServerState[] = ['updated', 'skipped'];

export const waveCount = (row: RolloutRow) => {
  const parsed = parseRolloutWaves(row.waves);
  return 'waves' in parsed ? parsed.waves.length : 1;
};

/**
 * The waves of a rollout (docs/fleet.md, "Agent updates"): offering a wave, failing a rollout once
 * with its alert, and moving a running rollout on as far as it goes now. Every step that several
 * console processes might take at once is a compare-and-set on the rollout's `state` and
 * `current_wave` or on the server row's `state`, so each wave starts once and each failure is
 * alerted once. agent-updates.service.ts starts, cancels and reads rollouts and takes the agents'
 * reports; it calls these.
 */
export function createRolloutWaves(deps: {
  db: Database;
  clock: () => number;
  audit: Pick<AuditService, 'fleet'>;
  notifications: Pick<NotificationsService, 'enqueueAlerts'>;
}) {
  const { db, clock, audit, notifications } = deps;

  const log = (
    accountId: number,
    action:
      | 'agent_update.start'
      | 'agent_update.cancel'
      | 'agent_update.wave'
      | 'agent_update.failed'
      | 'agent_update.completed',
    actor: { kind: AuditLogTable['actor_kind']; id: number | null; label: string },
    ip: string | null,
    summary: string,
    extra: { method?: string; path?: string; server?: { id: number; name: string }; status?: number } = {},
  ) =>
    audit.fleet({
      accountId,
      action,
      actor,
      ip,
      summary,
      status: extra.status ?? 200,
      outcome: 'done',
      ...(extra.method ? { method: extra.method, path: extra.path } : {}),
      ...(extra.server ? { server: extra.server } : {}),
    });

  /**
   * Offers wave `wave` in `trx`: its servers that checked in within the last two minutes are
   * `offered` (or `updated` when they run the version already), the others `skipped`.
   */
  async function offerWave(trx: Database, rollout: RolloutRow, wave: number, now: number) {
    const servers = (await listRolloutServers(trx, Number(rollout.id))).filter(
      (s) => Number(s.wave) === wave && s.state === 'pending',
    );
    const online = (s: (typeof servers)[number]) =>
      s.last_seen !== null && now - Number(s.last_seen) <= ONLINE_WINDOW_MS;
    const ids = (pick: (s: (typeof servers)[number]) => boolean) =>
      servers.filter(pick).map((s) => Number(s.server_id));
    const id = Number(rollout.id);
    await setRolloutServers(
      trx,
      id,
      { serverIds: ids((s) => online(s) && s.agent_version === rollout.version), from: ['pending'] },
      { state: 'updated', updated_at: now },
    );
    await setRolloutServers(
      trx,
      id,
      { serverIds: ids((s) => online(s) && s.agent_version !== rollout.version), from: ['pending'] },
      { state: 'offered', offered_at: now, updated_at: now },
    );
    await setRolloutServers(
      trx,
      id,
      { serverIds: ids((s) => !online(s)), from: ['pending'] },
      { state: 'skipped', reason: 'offline when its wave started', updated_at: now },
    );
  }

  /** Queues the "agent update failed" alert on each of the account's confirmed channels and its webhook, in `trx`. */
  async function alertFailure(
    trx: Database,
    rollout: RolloutRow,
    wave: number,
    server: { id: number; name: string } | null,
    reason: string,
    now: number,
  ) {
    const accountId = Number(rollout.account_id);
    const channels = await confirmedChannels(trx, accountId);
    const ids = new Set(channels.map((c) => (c.kind === 'webhook' ? 0 : Number(c.id))));
    if ((await accountsWithWebhook(trx, [accountId])).has(accountId)) ids.add(0);
    const where = server ? ` on ${server.name}` : '';
    await notifications.enqueueAlerts(
      trx,
      [...ids].map((channelId) => ({
        accountId,
        channelId,
        notification: {
          kind: 'agent_update.failed' as const,
          title: `Agent update to ${rollout.version} failed at wave ${wave + 1}${where}`,
          body: `${reason}. The rollout stopped: servers not yet offered are skipped (docs/fleet.md, "Agent updates").`,
          rule_id: null,
          rule: null,
          server_id: server?.id ?? null,
          server: server?.name ?? null,
          value: null,
          at: now,
          rollout_id: Number(rollout.id),
          wave,
          reason,
        },
      })),
    );
  }

  /** Fails a running rollout once (compare-and-set): pending servers skipped, the alert queued, the audit entry written. */
  async function fail(rollout: RolloutRow, server: { id: number; name: string } | null, reason: string) {
    const now = clock();
    const wave = Number(rollout.current_wave);
    const failed = await db.transaction().execute(async (trx) => {
      if (!(await finishRollout(trx, Number(rollout.id), { state: 'failed', reason, finished_at: now }))) return false;
      await setRolloutServers(
        trx,
        Number(rollout.id),
        { from: ['pending'] },
        { state: 'skipped', reason: `the rollout failed at wave ${wave + 1}`, updated_at: now },
      );
      await alertFailure(trx, rollout, wave, server, reason, now);
      return true;
    });
    if (failed) {
      await log(
        Number(rollout.account_id),
        'agent_update.failed',
        CONSOLE_ACTOR,
        null,
        `rollout ${rollout.id} to ${rollout.version} failed at wave ${wave + 1}: ${reason}`,
        server ? { server } : {},
      );
    }
  }

  /**
   * Moves a running rollout on as far as it goes now: fails it on a server rolled back, failed or
   * not updated in time; starts the next wave once every server of this one is updated or skipped
   * (compare-and-set on current_wave, so with several consoles a wave starts once); completes it
   * after the last.
   */
  async function advanceRollout(start: RolloutRow) {
    const rollout = { ...start };
    const count = waveCount(rollout);
    for (;;) {
      const now = clock();
      const servers = await listRolloutServers(db, Number(rollout.id));
      const bad = servers.find((s) => s.state === 'rolled_back' || s.state === 'failed');
      if (bad) {
        const what = bad.state === 'rolled_back' ? 'rolled back' : 'failed';
        return fail(
          rollout,
          { id: Number(bad.server_id), name: bad.name },
          `${bad.name} ${what}: ${bad.reason ?? 'no reason given'}`,
        );
      }
      const limitMs = (Number(rollout.health_timeout_s) + UPDATE_REPORT_SLACK_S) * 1000;
      const late = servers.find(
        (s) => IN_FLIGHT.includes(s.state) && s.offered_at !== null && now - Number(s.offered_at) >= limitMs,
      );
      if (late) {
        const reason = `not updated within ${limitMs / 1000} s of its offer`;
        await setRolloutServers(
          db,
          Number(rollout.id),
          { serverIds: [Number(late.server_id)], from: IN_FLIGHT },
          { state: 'failed', reason, updated_at: now },
        );
        return fail(rollout, { id: Number(late.server_id), name: late.name }, `${late.name}: ${reason}`);
      }
      const wave = Number(rollout.current_wave);
      if (!servers.filter((s) => Number(s.wave) === wave).every((s) => DONE.includes(s.state))) return;
      if (wave + 1 >= count) {
        if (await finishRollout(db, Number(rollout.id), { state: 'completed', reason: null, finished_at: now })) {
          const updated = servers.filter((s) => s.state === 'updated').length;
          await log(
            Number(rollout.account_id),
            'agent_update.completed',
            CONSOLE_ACTOR,
            null,
            `rollout ${rollout.id} to ${rollout.version} completed: ${updated} of ${servers.length} servers updated`,
          );
        }
        return;
      }
      const moved = await db.transaction().execute(async (trx) => {
        if (!(await moveRolloutWave(trx, Number(rollout.id), wave, wave + 1))) return false;
        await offerWave(trx, rollout, wave + 1, now);
        return true;
      });
      if (!moved) return; // another process started it, or the rollout ended meanwhile
      rollout.current_wave = wave + 1;
      await log(
        Number(rollout.account_id),
        'agent_update.wave',
        CONSOLE_ACTOR,
        null,
        `rollout ${rollout.id} to ${rollout.version}: wave ${wave + 2} of ${count} started`,
      );
    }
  }

  return { log, offerWave, advanceRollout };
}
