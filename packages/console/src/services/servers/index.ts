import {
  type ControlPath,
  generateToken,
  hashToken,
  isWellFormedToken,
  lateAfterMs,
  type RegistrationConnect,
} from '@palisade/protocol';
import type { ConsoleConfig, Permission } from '../../config.js';
import type { AccountRow, Database, ServerRow } from '../../db/schema.js';
import { AppError, badRequest, conflict, notFound } from '../../errors.js';
import type { GuardedClient } from '../../outbound/guarded-client.js';
import { listDoneRuns, listRuns } from '../../repositories/benchmarks.repository.js';
import { findProduct } from '../../repositories/products.repository.js';
import { fleetCpuBuckets } from '../../repositories/samples.repository.js';
import {
  countProductServers,
  deleteServer,
  findServer,
  findServerByDaemonToken,
  insertServer,
  latestSamples,
  listServerSummaries,
  updateServer,
} from '../../repositories/servers.repository.js';
import type { SecretBox } from '../../secrets.js';
import { requirePermission } from '../accounts.service.js';
import type { ChangesService } from '../changes.service.js';
import { type AgentTarget, createAgentClient, explainAgentStatus, isHttps, pinFor } from './agent-client.js';
import { type HistoryRange, serverHistory } from './history.js';
import { createLinkRegistry, type LinkState } from './links.js';
import { createListAnswers } from './list-cache.js';
import { createAgentProxy, type ProxiedAnswer } from './proxy.js';
import { createRecheck } from './recheck.js';
import { createCallRecorder } from './state.js';
import { fleetTrends, TREND_BUCKET_MS, TREND_WINDOW_MS } from './trends.js';
import {
  dashboardServer,
  dashboardSummary,
  doneRunView,
  factsSection,
  fleetCounts,
  runView,
  scoreSection,
  serverDetail,
  serverSummary,
} from './views.js';

export type { AgentTarget, ConnectionCheck } from './agent-client.js';
export { HISTORY_RANGES, type HistoryRange } from './history.js';
export type { ProxiedAnswer } from './proxy.js';
export { RECHECK_INTERVAL_MS } from './recheck.js';
export { type ServerState, serverState } from './state.js';
export { ONLINE_WINDOW_MS, runView, serverFacts, serverTags, storedReport } from './views.js';

export interface NewServer {
  product_id: number;
  name: string;
  api_url: string;
  api_key: string;
  /** The agent's own certificate, pinned (canonical `AB:CD:…`); only for https addresses. */
  tls_fingerprint?: string | null;
}

export interface ServersDeps {
  db: Database;
  clock: () => number;
  /** The check-in interval told to agents decides when a server is late (lateAfterMs()). */
  config: Pick<ConsoleConfig, 'agentTimeoutMs' | 'checkinIntervalS' | 'linkHeartbeatMs'>;
  outbound: GuardedClient;
  secrets: SecretBox;
  /** Drops cached v1 answers when an account's servers change; writes here publish (changes.service.ts). */
  changes: Pick<ChangesService, 'changed' | 'onChange' | 'ready'>;
}

/** Told when a server was added or what fleet scopes select by (its tags) changed (fleet policies plug in here). */
export type ServerChangeListener = (accountId: number, serverId: number) => Promise<void>;

/** Who is asking: the account, with the permissions its control calls are checked against. */
type Viewer = Pick<AccountRow, 'id' | 'permissions'>;

const SECTIONS = 'overview, score, history, benchmarks, attacks, facts';

/**
 * The fleet: a user's servers, their views, and the calls to their agents. Every method looks the
 * server up once, for the asking account (another account's server is 404, like a missing one), and
 * checks the permission the call needs after that lookup.
 */
export function createServersService({ db, clock, config, outbound, secrets, changes: feed }: ServersDeps) {
  const links = createLinkRegistry(clock, config.linkHeartbeatMs);
  const changeListeners: ServerChangeListener[] = [];
  const changed = async (accountId: number, serverId: number) => {
    for (const listener of changeListeners) await listener(accountId, serverId);
  };
  const answers = createListAnswers({ db, clock, changes: feed });
  const agents = createAgentClient(outbound, config.agentTimeoutMs, clock, links);

  const recordCall = createCallRecorder(db, clock);
  const proxy = createAgentProxy(agents, secrets, recordCall);
  /**
   * How the server is reached is `servers.connect`, which only its account changes (setConnection);
   * an `outbound` server's link as any process sees it, `down` when it is not up anywhere.
   */
  async function connectionOf(row: ServerRow): Promise<LinkState> {
    if (row.connect === 'direct') return { mode: 'direct', link: null, since: null };
    const seen = await links.stateAnywhere(row.id);
    return seen.mode === 'direct' ? { mode: 'outbound', link: 'down', since: null } : seen;
  }
  /** When a server is late: two missed check-ins of the interval every agent is told (checkins.service.ts). */
  const lateAfter = lateAfterMs(config.checkinIntervalS);
  const serverView = async (row: ServerRow, now: number) =>
    dashboardServer(row, now, lateAfter, await connectionOf(row));

  /** The connection test of a saved server counts as a call to its agent. */
  async function checkSaved(row: ServerRow) {
    const check = await agents.check(proxy.targetOf(row));
    await recordCall(
      row,
      'error' in check ? { ok: false, error: check.error || 'the agent did not answer' } : { ok: true },
    );
    return check;
  }

  /** One of the account's servers, or 404. */
  async function requireServer(accountId: number, id: number): Promise<ServerRow> {
    const row = await findServer(db, accountId, id);
    if (!row) throw notFound('server');
    return row;
  }

  /** The server for this viewer, then the permission the call needs (a missing server is 404 first). */
  async function serverFor(viewer: Viewer, id: number, needed?: Permission): Promise<ServerRow> {
    const row = await requireServer(viewer.id, id);
    if (needed) requirePermission(viewer, needed);
    return row;
  }

  /** Refuses a target that does not answer /health as an agent with this key, saying why. */
  async function requireHealthy(target: AgentTarget) {
    const check = await agents.check(target);
    if ('error' in check) {
      const error = check.error || 'the agent did not answer';
      throw badRequest(error.startsWith('tls_fingerprint: ') ? error : `api_url: ${error}`);
    }
    return check;
  }

  /**
   * How a registering agent is reached: `direct` needs its /health to answer at the address;
   * `outbound` is not asked now (its link carries every call, and linkOpened() checks it once up);
   * `auto` asks, and an agent the console did not reach (no answer, an address it may not call, a
   * certificate that is not the agent's: the key is never sent there) is `outbound`; one that
   * answered and refused the key is refused as `direct` is (docs/decisions.md, "Registering an agent
   * the console cannot reach").
   */
  async function reachFor(target: AgentTarget, connect: RegistrationConnect) {
    if (connect === 'outbound') return { connect: 'outbound' as const, agentVersion: null };
    const check = await agents.check(target);
    if ('error' in check && connect === 'auto' && !check.reachable)
      return { connect: 'outbound' as const, agentVersion: null };
    if ('error' in check) {
      const error = check.error || 'the agent did not answer';
      throw badRequest(error.startsWith('tls_fingerprint: ') ? error : `api_url: ${error}`);
    }
    return { connect: 'direct' as const, agentVersion: check.agent_version ?? null };
  }

  /** Checks the product, its room and how the agent is reached, then stores the server (no daemon token yet). */
  async function insertChecked(
    accountId: number,
    input: NewServer,
    how: { connect: RegistrationConnect; version?: string } = { connect: 'direct' },
  ): Promise<ServerRow> {
    const product = await findProduct(db, accountId, input.product_id);
    if (!product) throw badRequest('product_id: no product with this id on your account');
    if ((await countProductServers(db, product.id)) >= product.server_limit) {
      throw conflict(
        `product_id: the ${product.name} plan allows ${product.server_limit} servers; remove one or add a product`,
      );
    }
    const pin = pinFor(input.api_url, input.tls_fingerprint ?? null);
    const reach = await reachFor({ apiUrl: input.api_url, apiKey: input.api_key, tlsFingerprint: pin }, how.connect);
    return insertServer(db, {
      account_id: accountId,
      product_id: product.id,
      name: input.name,
      api_url: input.api_url,
      api_key_enc: secrets.seal(input.api_key),
      tls_fingerprint: pin,
      hostname: null,
      public_ip: null,
      facts: '{}',
      agent_version: reach.agentVersion ?? how.version ?? null,
      connect: reach.connect,
      daemon_token_hash: null,
      last_seen: null,
      latest_sample: null,
      score_base: null,
      created_at: clock(),
    });
  }

  /** A new daemon token for the server; only its hash is kept. The agent gets the raw value. */
  async function newDaemonToken(serverId: number) {
    const token = generateToken('daemon');
    await updateServer(db, serverId, { daemon_token_hash: hashToken(token) });
    links.drop(serverId); // a link opened with the old token ends with it
    return token;
  }

  return {
    requireServer,

    addChangeListener(listener: ServerChangeListener) {
      changeListeners.push(listener);
    },

    /** This process's outbound links (routes/agent/link.ts holds them; docs/agent.md, "Outbound link"). */
    links,

    /**
     * A server's agent just proved its link (links.ts): its /health is asked down it at once, so a
     * server the console could not reach directly counts as reachable without waiting for a recheck.
     * The link never changes how the server is reached: only its account does (setConnection).
     */
    async linkOpened(row: ServerRow) {
      await checkSaved(row);
    },

    /** The SHA-256 of the agent key a link must prove it holds (proxy.ts); null when it cannot be opened. */
    linkKeySha256: (row: ServerRow) => proxy.keySha256(row),

    /**
     * Switches how the console reaches the server (`direct` at its address, `outbound` only through
     * the link its agent opens): the account's own decision, with `control.edit` (the route audits
     * it). A link held for a server switched to `direct` is closed. Answers the mode before and the view.
     */
    async setConnection(viewer: Viewer, id: number, mode: 'direct' | 'outbound') {
      const row = await serverFor(viewer, id, 'control.edit');
      const before = row.connect;
      if (before !== mode) {
        await updateServer(db, row.id, { connect: mode });
        if (mode === 'direct') links.drop(row.id);
        await feed.changed(viewer.id);
      }
      return { before, name: row.name, server: await serverView((await findServer(db, viewer.id, id))!, clock()) };
    },

    /** The server a daemon token (`dmn_…`) belongs to, as check-ins find it (only its hash is compared), or null. */
    async forDaemonToken(token: string | null): Promise<ServerRow | null> {
      if (!token || !isWellFormedToken('daemon', token)) return null;
      return (await findServerByDaemonToken(db, hashToken(token))) ?? null;
    },

    /** The v1 list. */
    async list(accountId: number) {
      const now = clock();
      return (await listServerSummaries(db, accountId)).map((row) => serverSummary(row, now));
    },

    /** The v1 list's whole answer as UTF-8 JSON bytes, from memory while nothing changed it (list-cache.ts). */
    listAnswer: (accountId: number) => answers.answer(accountId),

    /** The v1 answers served from memory and built anew, for /metrics. */
    listCacheStats: () => answers.stats(),

    /** The dashboard's fleet list: each server with its state, and the counts by state. */
    async fleet(accountId: number, filter: { tag?: string } = {}) {
      const now = clock();
      const servers = (await listServerSummaries(db, accountId))
        .map((row) => dashboardSummary(row, now, lateAfter))
        .filter((s) => filter.tag === undefined || s.tags.includes(filter.tag));
      return { servers, counts: fleetCounts(servers) };
    },

    /** The fleet table's figures now and last-hour CPU per server: two queries for the whole fleet. */
    async trends(accountId: number) {
      const now = clock();
      const since = (Math.floor(now / TREND_BUCKET_MS) + 1) * TREND_BUCKET_MS - TREND_WINDOW_MS;
      const [servers, buckets] = await Promise.all([
        latestSamples(db, accountId),
        fleetCpuBuckets(db, accountId, since, TREND_BUCKET_MS),
      ]);
      return fleetTrends(servers, buckets, now);
    },

    /**
     * Looks at the servers checking in without waiting for a viewer (recheck.ts): direct ones get a
     * light /health probe, outbound ones are judged by their link, so a refused connection turns a
     * server unreachable within a round, and an answer online again.
     */
    recheckUnreachable: createRecheck({ db, clock, recordCall, checkSaved, connectionOf }),

    /** The v1 detail. */
    async detail(accountId: number, id: number) {
      return serverDetail(await requireServer(accountId, id), clock());
    },

    /** Finished runs only, newest first; never the log or the run token (v1). */
    async doneBenchmarks(accountId: number, id: number) {
      const row = await requireServer(accountId, id);
      return (await listDoneRuns(db, row.id)).map(doneRunView);
    },

    /** The dashboard's view of one server. */
    async get(accountId: number, id: number) {
      return serverView(await requireServer(accountId, id), clock());
    },

    async add(accountId: number, input: NewServer, consoleUrl: string) {
      const row = await insertChecked(accountId, input);
      await feed.changed(accountId);
      const token = await newDaemonToken(row.id);
      try {
        const enrol = await proxy.call(
          row,
          'POST',
          '/enroll',
          Buffer.from(JSON.stringify({ console_url: consoleUrl, token })),
        );
        if (enrol.status < 200 || enrol.status > 299) {
          throw new AppError(502, `the agent did not accept the enrolment: ${explainAgentStatus(enrol.status)}`);
        }
      } catch (err) {
        await deleteServer(db, accountId, row.id); // nothing half-stored
        await feed.changed(accountId);
        throw err;
      }
      await changed(accountId, row.id);
      return serverView((await findServer(db, accountId, row.id))!, clock());
    },

    /**
     * A server the agent registered itself (docs/agent.md, "One-line install"): the same product,
     * limit and /health checks as `add`, but the agent asked, so its daemon token goes back in the
     * answer instead of to the agent's `/enroll`.
     */
    async register(accountId: number, input: NewServer, how: { connect: RegistrationConnect; version: string }) {
      const row = await insertChecked(accountId, input, how);
      const daemonToken = await newDaemonToken(row.id);
      await feed.changed(accountId);
      await changed(accountId, row.id);
      return { server: row, daemonToken, connect: row.connect };
    },

    /** Removes a server registered by `register` whose enrolment token was used up meanwhile. */
    async unregister(accountId: number, id: number) {
      await deleteServer(db, accountId, id);
      await feed.changed(accountId);
    },

    /**
     * Name, tags, address, key and pin. A new address needs the key again; a new pin alone is checked with
     * the stored key, which goes out only after the agent's certificate matched the new pin.
     */
    async update(
      accountId: number,
      id: number,
      changes: Partial<Pick<NewServer, 'name' | 'api_url' | 'api_key' | 'tls_fingerprint'> & { tags: string[] }>,
    ) {
      const row = await requireServer(accountId, id);
      // The stored key belongs to the stored address: a new address could be anyone's, so it must come
      // with the key again, and only that key is sent to it.
      if (changes.api_url !== undefined && changes.api_url !== row.api_url && changes.api_key === undefined) {
        throw badRequest(
          'api_key: send the agent key again when you change api_url; the stored key stays with the old address',
        );
      }
      const apiUrl = changes.api_url ?? row.api_url;
      // The stored pin follows the agent to a new https address; an http address has none to keep.
      const pin =
        changes.tls_fingerprint !== undefined
          ? pinFor(apiUrl, changes.tls_fingerprint)
          : isHttps(apiUrl)
            ? row.tls_fingerprint
            : null;
      // The stored key is opened only when the agent must be checked: a rename or new tags need no key.
      // A new key for the same agent (same address, same pin) is checked down its outbound link when
      // one is up, as every call is; a new address or pin is checked at the address, where it applies.
      if (changes.api_url !== undefined || changes.api_key !== undefined || changes.tls_fingerprint !== undefined)
        await requireHealthy({
          apiUrl,
          apiKey: changes.api_key ?? secrets.open(row.api_key_enc),
          tlsFingerprint: pin,
          ...(apiUrl === row.api_url && changes.tls_fingerprint === undefined
            ? { serverId: row.id, connect: row.connect }
            : {}),
        });
      await updateServer(db, id, {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.tags !== undefined ? { tags: JSON.stringify(changes.tags) } : {}),
        ...(changes.api_url !== undefined ? { api_url: changes.api_url } : {}),
        ...(changes.api_key !== undefined ? { api_key_enc: secrets.seal(changes.api_key) } : {}),
        ...(pin !== row.tls_fingerprint ? { tls_fingerprint: pin } : {}),
      });
      await feed.changed(accountId);
      if (changes.tags !== undefined) await changed(accountId, id);
      return serverView((await findServer(db, accountId, id))!, clock());
    },

    async remove(accountId: number, id: number) {
      if (!(await deleteServer(db, accountId, id))) throw notFound('server');
      await feed.changed(accountId);
      links.drop(id);
    },

    /** The dashboard's connection test, of a saved server or of an address not saved yet. */
    async test(
      accountId: number,
      input: { server_id: number } | { api_url: string; api_key: string; tls_fingerprint?: string | null },
    ) {
      if ('server_id' in input) return checkSaved(await requireServer(accountId, input.server_id));
      return agents.check({
        apiUrl: input.api_url,
        apiKey: input.api_key,
        tlsFingerprint: pinFor(input.api_url, input.tls_fingerprint ?? null),
      });
    },

    /**
     * For an agent the console cannot reach: a new daemon token to pass to `palisade-agent enroll` by
     * hand. A daemon token speaks for the agent (check-ins, reported bans, its link), so it needs
     * `control.edit`, as every other change to what the agent does.
     */
    async reissueEnrollment(viewer: Viewer, id: number, consoleUrl: string) {
      const row = await serverFor(viewer, id, 'control.edit');
      const token = await newDaemonToken(row.id);
      return {
        console_url: consoleUrl,
        token,
        command: `palisade-agent enroll --console ${consoleUrl} --token ${token}`,
      };
    },

    async metrics(accountId: number, id: number): Promise<ProxiedAnswer> {
      return proxy.metrics(await requireServer(accountId, id));
    },

    /** The control proxy: reading needs `control.read`, any write `control.edit` (docs/fleet.md, "Proxies"). */
    async control(
      viewer: Viewer,
      id: number,
      method: string,
      path: ControlPath,
      body: Buffer | undefined,
      query: string,
    ): Promise<ProxiedAnswer> {
      const row = await serverFor(viewer, id, method === 'GET' ? 'control.read' : 'control.edit');
      return proxy.control(row, method, path, body, query);
    },

    /**
     * A control call the console makes itself for the account's fleet policies (docs/protection.md,
     * "Fleet policies"), through the same proxy as a user's: no viewer, so no permission check; the
     * server must be the account's.
     */
    async fleetControl(accountId: number, id: number, method: string, path: ControlPath, body: Buffer | undefined) {
      return proxy.control(await requireServer(accountId, id), method, path, body, '');
    },

    /** One section of the dashboard's server page. */
    async section(viewer: Viewer, id: number, name: string, range: HistoryRange) {
      // The agent's attack list is read through the control API, so it needs what reading that needs.
      const row = await serverFor(viewer, id, name === 'attacks' ? 'control.read' : undefined);
      const now = clock();
      switch (name) {
        case 'overview':
          return serverView(row, now);
        case 'score':
          return scoreSection(row, now, lateAfter);
        case 'facts':
          return factsSection(row);
        case 'history':
          return serverHistory(db, row.id, range, now);
        case 'benchmarks':
          return { runs: (await listRuns(db, row.id)).map(runView) };
        case 'attacks':
          return proxy.attacks(row);
        default:
          throw badRequest(`name: expected one of ${SECTIONS}`);
      }
    },
  };
}

export type ServersService = ReturnType<typeof createServersService>;
