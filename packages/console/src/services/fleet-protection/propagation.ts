import { FLEET_NOTE_PREFIX, MAX_NOTE } from '@palisade/protocol';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { claimApplication, dueApplications, finishApplication } from '../../repositories/fleet.repository.js';
import type { AuditService } from '../audit.service.js';
import type { AgentsService } from '../servers/index.js';

/** Applications taken per round, and how many agent calls run at once. */
const ROUND_SIZE = 2000;
const PARALLEL = 25;
/** From this many new entries for one server and list, they go in one call, at most BATCH_MAX a call. */
const BATCH_MIN = 5;
const BATCH_MAX = 500;
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
  agents,
  audit,
  neverBlock = async () => null,
}: {
  db: Database;
  clock: () => number;
  /** The agents' control API, through the console's proxy (servers/agents.ts). */
  agents: Pick<AgentsService, 'requireServer' | 'fleetControl'>;
  audit: AuditService;
  /**
   * Why a blacklist address must never be put on an agent (special-use, the console's own), or null:
   * checked again before each call, so an entry stored before these checks existed is never applied.
   */
  neverBlock?: (address: string) => Promise<string | null>;
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
        // Rounds follow one another while there is more than one round's work, or more was added.
        let taken = 0;
        do {
          again = false;
          taken = await round();
        } while (again || taken === ROUND_SIZE);
      } finally {
        running = null;
      }
    })().catch((err) => report(err));
  }

  /** One round: every application due, claimed, PARALLEL agent calls at a time; answers how many it took. */
  async function round(): Promise<number> {
    names.clear();
    const due = await dueApplications(db, clock(), ROUND_SIZE);
    const mine: Due[] = [];
    for (let i = 0; i < due.length; i += PARALLEL) {
      const claimed = await Promise.all(
        due.slice(i, i + PARALLEL).map((app) => claimApplication(db, Number(app.id), clock(), clock() + CLAIM_MS)),
      );
      mine.push(...due.slice(i, i + PARALLEL).filter((_, j) => claimed[j]));
    }
    // Many new entries for one server and list go in one call (a fleet list filled at once); one
    // entry, a removal, or anything the batch cannot settle goes alone.
    const batches = new Map<string, Due[]>();
    const tasks: (() => Promise<void>)[] = [];
    for (const app of mine) {
      if (app.want === 'present' && app.list === 'black') {
        const why = await neverBlock(app.address);
        if (why) {
          tasks.push(() => finish(app, 'failed', `refused by the console: ${why}`, 400));
          continue;
        }
      }
      if (app.want !== 'present') {
        tasks.push(() => apply(app));
        continue;
      }
      const key = `${app.server_id}:${app.list}`;
      batches.set(key, [...(batches.get(key) ?? []), app]);
    }
    for (const group of batches.values()) {
      if (group.length < BATCH_MIN) for (const app of group) tasks.push(() => apply(app));
      else
        for (let i = 0; i < group.length; i += BATCH_MAX) tasks.push(() => applyBatch(group.slice(i, i + BATCH_MAX)));
    }
    let next = 0;
    const worker = async () => {
      while (next < tasks.length) await tasks[next++]!();
    };
    await Promise.all(Array.from({ length: Math.min(PARALLEL, tasks.length) }, worker));
    return due.length;
  }

  type Due = Awaited<ReturnType<typeof dueApplications>>[number];

  /** Stores the outcome of one application and logs it (docs/protection.md, "Audit log"). */
  async function finish(
    app: Due,
    state: 'applied' | 'failed',
    reason: string | null,
    status: number,
    extra: { preexisting?: number } = {},
  ) {
    const now = clock();
    const accountId = Number(app.account_id);
    const serverId = Number(app.server_id);
    await finishApplication(db, Number(app.id), app.want, {
      state,
      reason,
      attempts: Number(app.attempts) + 1,
      applied_at: state === 'applied' ? now : null,
      updated_at: now,
      ...extra,
    });
    if (!names.has(serverId))
      names.set(serverId, (await agents.requireServer(accountId, serverId).catch(() => null))?.name ?? null);
    const name = names.get(serverId) ?? null;
    await audit.fleet({
      accountId,
      action: 'fleet.apply',
      actor:
        app.policy_id !== null
          ? { kind: 'console', id: Number(app.policy_id), label: `fleet policy ${app.policy_id}` }
          : { kind: 'console', id: null, label: `fleet list (${app.lifted_by ?? app.created_by})` },
      ip: null,
      ...(name !== null ? { server: { id: serverId, name } } : {}),
      method: app.want === 'present' ? 'POST' : 'DELETE',
      path: pathOf(app),
      summary: `${app.want === 'present' ? 'add' : 'remove'} ${app.address} (fleet entry ${app.entry_id}: ${app.reason})`,
      status,
      outcome: state === 'applied' ? (reason ?? 'done') : reason!,
    });
  }

  /** Not reached (or it answered off the contract): tried again later, and at once when the server checks in. */
  async function retry(app: Due, why: string) {
    const attempts = Number(app.attempts) + 1;
    await finishApplication(db, Number(app.id), app.want, {
      reason: why,
      attempts,
      next_attempt_at: clock() + Math.min(RETRY_MAX_MS, RETRY_FIRST_MS * 2 ** Math.min(attempts - 1, 20)),
      updated_at: clock(),
    });
  }

  const pathOf = (app: Due) => (app.list === 'black' ? 'blacklist' : 'whitelist');
  const expired = (app: Due) => app.expires_at !== null && Number(app.expires_at) <= clock();

  /** The list entry the agent gets: the fleet's note (so its own entries stay apart) and what is left of the time. */
  function entryFor(app: Due) {
    const ttl = app.expires_at === null ? null : Math.max(1, Math.ceil((Number(app.expires_at) - clock()) / 1000));
    return {
      ip: app.address,
      note: `${FLEET_NOTE_PREFIX}${app.entry_id} ${app.reason}`.slice(0, MAX_NOTE),
      ...(ttl !== null ? { ttl_s: ttl } : {}),
    };
  }

  const call = (app: Due, method: string, body?: unknown) =>
    agents.fleetControl(
      Number(app.account_id),
      Number(app.server_id),
      method,
      pathOf(app),
      body === undefined ? undefined : Buffer.from(JSON.stringify(body)),
    );

  async function apply(app: Due) {
    if (app.want === 'absent' && Number(app.preexisting) === 1 && Number(app.force) === 0)
      return finish(app, 'applied', 'kept: the server held this address before the fleet entry', 200);
    if (app.want === 'present' && expired(app))
      return finish(app, 'failed', 'expired before the server could be reached', 410);
    try {
      // An entry is sent as an import of one: the agent skips an address it already holds, where a
      // plain add would replace that entry's note and time (packages/agent/src/protection/lists.ts),
      // so a server's own permanent ban would end when the fleet's entry does.
      const answer = await call(
        app,
        app.want === 'present' ? 'POST' : 'DELETE',
        app.want === 'present' ? [entryFor(app)] : { ip: app.address },
      );
      const json = JSON.parse(answer.body.toString('utf8')) as {
        skipped?: number;
        invalid?: number;
        invalid_examples?: string[];
        error?: string;
      };
      if (answer.status < 400 && app.want === 'present' && (json.invalid ?? 0) > 0)
        return finish(app, 'failed', `refused by the agent: ${json.invalid_examples?.[0] ?? 'invalid entry'}`, 400);
      if (answer.status < 400) {
        const preexisting = app.want === 'present' && json.skipped === 1 ? 1 : 0;
        return finish(app, 'applied', null, answer.status, app.want === 'present' ? { preexisting } : {});
      }
      if (app.want === 'absent' && answer.status === 404) return finish(app, 'applied', 'already gone', 404);
      return finish(app, 'failed', `refused by the agent: ${json.error ?? `HTTP ${answer.status}`}`, answer.status);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 404) return finish(app, 'failed', 'the server was removed', 404);
      await retry(app, err.message);
    }
  }

  /**
   * Many new entries for one server and list: the agent's list is read once (what it already holds
   * is its own, kept when the server leaves the scope), the rest is imported in one call. A batch
   * the agent does not take whole is applied entry by entry, for each entry's own answer.
   */
  async function applyBatch(group: Due[]) {
    const live = group.filter((app) => !expired(app));
    for (const app of group)
      if (expired(app)) await finish(app, 'failed', 'expired before the server could be reached', 410);
    try {
      const listed = await call(live[0]!, 'GET');
      if (listed.status >= 400) throw new AppError(502, `HTTP ${listed.status}`);
      const held = new Set(
        (JSON.parse(listed.body.toString('utf8')) as { entries: { ip: string }[] }).entries.map((e) => e.ip),
      );
      const fresh = live.filter((app) => !held.has(app.address));
      for (const app of live) if (held.has(app.address)) await finish(app, 'applied', null, 200, { preexisting: 1 });
      if (fresh.length === 0) return;
      const answer = await call(fresh[0]!, 'POST', fresh.map(entryFor));
      const json = JSON.parse(answer.body.toString('utf8')) as { invalid?: number };
      if (answer.status < 400 && json.invalid === 0) {
        for (const app of fresh) await finish(app, 'applied', null, answer.status, { preexisting: 0 });
        return;
      }
      for (const app of fresh) await apply(app);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      if (err.status === 404) {
        for (const app of live) await finish(app, 'failed', 'the server was removed', 404);
        return;
      }
      for (const app of live) await retry(app, err.message);
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
