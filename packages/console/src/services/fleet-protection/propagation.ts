import { FLEET_NOTE_PREFIX, MAX_NOTE } from '@palisade/protocol';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { claimApplication, dueApplications, finishApplication } from '../../repositories/fleet.repository.js';
import type { AuditService } from '../audit.service.js';
import type { ServersService } from '../servers/index.js';

/** Applications taken per round, and how many agent calls run at once. */
const ROUND_SIZE = 200;
const PARALLEL = 25;
/** How long a process holds an application it claimed before another may take it. */
const CLAIM_MS = 60_000;
/** Retries of an unreachable server: 2 s, doubling, at most 5 minutes apart (and at once on its next check-in). */
const RETRY_FIRST_MS = 2000;
const RETRY_MAX_MS = 5 * 60_000;

/**
 * Puts fleet entries on servers and takes them off (docs/protection.md, "Fleet policies"): each
 * pending application is claimed in the database, then sent through the control proxy as a user's
 * change would be; an unreachable server is tried again with back-off, every outcome is logged.
 */
export function createPropagator({
  db,
  clock,
  servers,
  audit,
}: {
  db: Database;
  clock: () => number;
  servers: ServersService;
  audit: AuditService;
}) {
  let running: Promise<void> | null = null;
  let again = false;

  /** Server names for the audit log, looked up once per round. */
  const names = new Map<number, string | null>();

  /** Where a failed round is reported: the process's log, once server.ts has called kick with it. */
  let report: (err: unknown) => void = () => {};

  /** Starts a round now (or right after the one running): a new entry does not wait for the timer. */
  function kick(onError?: (err: unknown) => void) {
    if (onError) report = onError;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      try {
        do {
          again = false;
          await round();
        } while (again);
      } finally {
        running = null;
      }
    })().catch((err) => report(err));
  }

  /** One round: every application due, claimed one by one, PARALLEL agent calls at a time. */
  async function round(): Promise<number> {
    names.clear();
    const now = clock();
    const due = await dueApplications(db, now, ROUND_SIZE);
    let done = 0;
    let next = 0;
    const worker = async () => {
      while (next < due.length) {
        const app = due[next++]!;
        if (!(await claimApplication(db, Number(app.id), clock(), clock() + CLAIM_MS))) continue;
        await apply(app);
        done++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, due.length) }, worker));
    return done;
  }

  type Due = Awaited<ReturnType<typeof dueApplications>>[number];

  async function apply(app: Due) {
    const now = clock();
    const accountId = Number(app.account_id);
    const serverId = Number(app.server_id);
    const path = app.list === 'black' ? 'blacklist' : 'whitelist';
    const actor =
      app.policy_id !== null
        ? { kind: 'console' as const, id: Number(app.policy_id), label: `fleet policy ${app.policy_id}` }
        : { kind: 'console' as const, id: null, label: `fleet list (${app.lifted_by ?? app.created_by})` };
    const finish = async (
      state: 'applied' | 'failed',
      reason: string | null,
      status: number,
      extra: { preexisting?: number } = {},
    ) => {
      await finishApplication(db, Number(app.id), app.want, {
        state,
        reason,
        attempts: Number(app.attempts) + 1,
        applied_at: state === 'applied' ? now : null,
        updated_at: now,
        ...extra,
      });
      if (!names.has(serverId))
        names.set(serverId, (await servers.requireServer(accountId, serverId).catch(() => null))?.name ?? null);
      const name = names.get(serverId) ?? null;
      await audit.fleet({
        accountId,
        action: 'fleet.apply',
        actor,
        ip: null,
        ...(name !== null ? { server: { id: serverId, name } } : {}),
        method: app.want === 'present' ? 'POST' : 'DELETE',
        path,
        summary: `${app.want === 'present' ? 'add' : 'remove'} ${app.address} (fleet entry ${app.entry_id}: ${app.reason})`,
        status,
        outcome: state === 'applied' ? (reason ?? 'done') : reason!,
      });
    };

    if (app.want === 'absent' && Number(app.preexisting) === 1 && Number(app.force) === 0) {
      return finish('applied', 'kept: the server held this address before the fleet entry', 200);
    }
    if (app.want === 'present' && app.expires_at !== null && Number(app.expires_at) <= now) {
      return finish('failed', 'expired before the server could be reached', 410);
    }
    const ttl = app.expires_at === null ? null : Math.max(1, Math.ceil((Number(app.expires_at) - now) / 1000));
    const body =
      app.want === 'present'
        ? {
            ip: app.address,
            note: `${FLEET_NOTE_PREFIX}${app.entry_id} ${app.reason}`.slice(0, MAX_NOTE),
            ...(ttl !== null ? { ttl_s: ttl } : {}),
          }
        : { ip: app.address };
    try {
      const answer = await servers.fleetControl(
        accountId,
        serverId,
        app.want === 'present' ? 'POST' : 'DELETE',
        path,
        Buffer.from(JSON.stringify(body)),
      );
      const json = JSON.parse(answer.body.toString('utf8')) as { added?: boolean; error?: string };
      if (answer.status < 400) {
        const preexisting = app.want === 'present' && json.added === false ? 1 : 0;
        return finish('applied', null, answer.status, app.want === 'present' ? { preexisting } : {});
      }
      if (app.want === 'absent' && answer.status === 404) return finish('applied', 'already gone', 404);
      return finish('failed', `refused by the agent: ${json.error ?? `HTTP ${answer.status}`}`, answer.status);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 404) return finish('failed', 'the server was removed', 404);
      // Not reached (or it answered with something off the contract): tried again later, and at
      // once when the server checks in.
      const attempts = Number(app.attempts) + 1;
      await finishApplication(db, Number(app.id), app.want, {
        reason: err.message,
        attempts,
        next_attempt_at: now + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(attempts - 1, 20)),
        updated_at: now,
      });
    }
  }

  return {
    kick,
    /** One round of propagation in this process; answers how many applications it finished. */
    round,
    /** Waits for a round this process started. */
    async settle() {
      while (running) await running;
    },
  };
}

export type Propagator = ReturnType<typeof createPropagator>;
