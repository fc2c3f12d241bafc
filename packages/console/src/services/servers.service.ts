import { generateToken, hashToken } from '@palisade/protocol';
import type { ConsoleConfig } from '../config.js';
import type { AccountRow, Database, ServerRow } from '../db/schema.js';
import { AppError, badRequest, conflict, notFound } from '../errors.js';
import { parseJson } from '../json.js';
import { OutboundError, type OutboundResponse } from '../outbound/guarded-client.js';
import { listRuns } from '../repositories/benchmarks.repository.js';
import { findProduct } from '../repositories/products.repository.js';
import { samplesBetween } from '../repositories/samples.repository.js';
import {
  countProductServers,
  deleteServer,
  findServer,
  insertServer,
  updateServer,
} from '../repositories/servers.repository.js';
import type { SecretBox } from '../secrets.js';
import { requirePermission } from './accounts.service.js';
import { type AgentClient, type AgentTarget, explainAgentStatus, explainTlsFailure } from './agent-client.js';
import { requireOwnServer, serverDetail } from './fleet.service.js';
import { type ScoreBase, serverScore, WEIGHTS } from './score.js';

export const HISTORY_RANGES = {
  '1h': 3600_000,
  '24h': 86_400_000,
  '7d': 7 * 86_400_000,
  '30d': 30 * 86_400_000,
} as const;
export type HistoryRange = keyof typeof HISTORY_RANGES;
const HISTORY_POINTS = 360;
const JSON_TYPE = 'application/json; charset=utf-8';

export interface NewServer {
  product_id: number;
  name: string;
  api_url: string;
  api_key: string;
  /** The agent's own certificate, pinned (canonical `AB:CD:…`); only for https addresses. */
  tls_fingerprint?: string | null;
}

export interface ProxiedAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

interface ServersDeps {
  db: Database;
  clock: () => number;
  config: Pick<ConsoleConfig, 'checkinIntervalS'>;
  agents: AgentClient;
  secrets: SecretBox;
}

/** The dashboard's view of a server: the v1 detail plus what only the owner's dashboard needs. Never the key or the agent address. */
export function dashboardServer(row: ServerRow, now: number) {
  return {
    ...serverDetail(row, now),
    product_id: row.product_id,
    agent_version: row.agent_version,
    enrolled: row.daemon_token_hash !== null,
    tls_fingerprint: row.tls_fingerprint,
  };
}

/** Who is asking: the account, with the permissions its control calls are checked against. */
type Viewer = Pick<AccountRow, 'id' | 'permissions'>;

/** How errors name an agent: by the server's name, never by its address. */
const agentOf = (row: ServerRow) => `the agent of server "${row.name}"`;

export function createServersService({ db, clock, agents, secrets }: ServersDeps) {
  const requireServer = (accountId: number, id: number) => requireOwnServer(db, accountId, id);

  const targetOf = (row: ServerRow): AgentTarget => ({
    apiUrl: row.api_url,
    apiKey: secrets.open(row.api_key_enc),
    tlsFingerprint: row.tls_fingerprint,
  });

  /** Refuses a target that does not answer /health as an agent with this key, saying why. */
  async function requireHealthy(target: AgentTarget) {
    const check = await agents.check(target);
    if (check.status !== 200) {
      const error = check.error ?? 'the agent did not answer';
      throw badRequest(error.startsWith('tls_fingerprint: ') ? error : `api_url: ${error}`);
    }
    return check;
  }

  /** Calls the agent for the proxies: network failures become 502 with a plain reason. */
  async function proxy(row: ServerRow, method: string, path: string, body?: Buffer, query?: string) {
    try {
      return await agents.call(targetOf(row), method, path, body, query);
    } catch (err) {
      if (err instanceof OutboundError) {
        if (err.kind === 'tls') throw new AppError(502, explainTlsFailure(err));
        if (err.kind === 'too_large') throw new AppError(502, `${agentOf(row)} answered too much: ${err.message}`);
        throw new AppError(502, err.kind === 'refused' ? `agent address refused: ${err.message}` : 'agent unreachable');
      }
      throw err;
    }
  }

  /**
   * An agent's answer is passed on only as JSON the console parsed and wrote again: an agent that
   * answers a page (text/html with a script) must not get it served from the console's origin.
   */
  function jsonFromAgent(row: ServerRow, res: OutboundResponse): Buffer {
    const type = String(res.headers['content-type'] ?? '');
    if (!/^application\/json\s*(;|$)/i.test(type)) {
      throw new AppError(502, `${agentOf(row)} answered ${type.split(';')[0] || 'without a content type'}, not JSON`);
    }
    try {
      return Buffer.from(JSON.stringify(JSON.parse(res.body.toString('utf8'))));
    } catch {
      throw new AppError(502, `${agentOf(row)} answered invalid JSON`);
    }
  }

  /** `: <its error>` when a failed agent answered `{"error": "<text>"}` as JSON, else nothing. */
  function agentErrorText(res: OutboundResponse): string {
    if (!/^application\/json\s*(;|$)/i.test(String(res.headers['content-type'] ?? ''))) return '';
    const error = parseJson<{ error?: unknown } | null>(res.body.toString('utf8'), null)?.error;
    return typeof error === 'string' ? `: ${error.slice(0, 200)}` : '';
  }

  /** A new daemon token for the server; only its hash is kept. The agent gets the raw value. */
  async function newDaemonToken(serverId: number) {
    const token = generateToken('daemon');
    await updateServer(db, serverId, { daemon_token_hash: hashToken(token) });
    return token;
  }

  return {
    requireServer,

    async get(accountId: number, id: number) {
      return dashboardServer(await requireServer(accountId, id), clock());
    },

    async add(accountId: number, input: NewServer, consoleUrl: string) {
      const product = await findProduct(db, accountId, input.product_id);
      if (!product) throw badRequest('product_id: no product with this id on your account');
      if ((await countProductServers(db, product.id)) >= product.server_limit) {
        throw conflict(
          `product_id: the ${product.name} plan allows ${product.server_limit} servers; remove one or add a product`,
        );
      }
      const pin = pinFor(input.api_url, input.tls_fingerprint ?? null);
      const check = await requireHealthy({ apiUrl: input.api_url, apiKey: input.api_key, tlsFingerprint: pin });
      const row = await insertServer(db, {
        account_id: accountId,
        product_id: product.id,
        name: input.name,
        api_url: input.api_url,
        api_key_enc: secrets.seal(input.api_key),
        tls_fingerprint: pin,
        hostname: null,
        public_ip: null,
        facts: '{}',
        agent_version: check.agent_version ?? null,
        daemon_token_hash: null,
        last_seen: null,
        latest_sample: null,
        score_base: null,
        created_at: clock(),
      });
      const token = await newDaemonToken(row.id);
      try {
        const enrol = await proxy(
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
        throw err;
      }
      return dashboardServer((await findServer(db, accountId, row.id))!, clock());
    },

    /**
     * Name, address, key and pin. A new address needs the key again; a new pin alone is checked with
     * the stored key, which goes out only after the agent's certificate matched the new pin.
     */
    async update(
      accountId: number,
      id: number,
      changes: Partial<Pick<NewServer, 'name' | 'api_url' | 'api_key' | 'tls_fingerprint'>>,
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
      const target = { apiUrl, apiKey: changes.api_key ?? secrets.open(row.api_key_enc), tlsFingerprint: pin };
      if (changes.api_url !== undefined || changes.api_key !== undefined || changes.tls_fingerprint !== undefined)
        await requireHealthy(target);
      await updateServer(db, id, {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.api_url !== undefined ? { api_url: changes.api_url } : {}),
        ...(changes.api_key !== undefined ? { api_key_enc: secrets.seal(changes.api_key) } : {}),
        ...(pin !== row.tls_fingerprint ? { tls_fingerprint: pin } : {}),
      });
      return dashboardServer((await findServer(db, accountId, id))!, clock());
    },

    async remove(accountId: number, id: number) {
      if (!(await deleteServer(db, accountId, id))) throw notFound('server');
    },

    async test(
      accountId: number,
      input: { server_id: number } | { api_url: string; api_key: string; tls_fingerprint?: string | null },
    ) {
      if ('server_id' in input) return agents.check(targetOf(await requireServer(accountId, input.server_id)));
      return agents.check({
        apiUrl: input.api_url,
        apiKey: input.api_key,
        tlsFingerprint: pinFor(input.api_url, input.tls_fingerprint ?? null),
      });
    },

    /** For an agent the console cannot reach: a new daemon token to pass to `palisade-agent enroll` by hand. */
    async reissueEnrollment(accountId: number, id: number, consoleUrl: string) {
      await requireServer(accountId, id);
      const token = await newDaemonToken(id);
      return {
        console_url: consoleUrl,
        token,
        command: `palisade-agent enroll --console ${consoleUrl} --token ${token}`,
      };
    },

    async metrics(accountId: number, id: number): Promise<ProxiedAnswer> {
      const row = await requireServer(accountId, id);
      const res = await proxy(row, 'GET', '/metrics');
      if (res.status !== 200) throw new AppError(502, explainAgentStatus(res.status));
      return { status: 200, contentType: JSON_TYPE, body: jsonFromAgent(row, res) };
    },

    /**
     * Forwards method, body and the other query parameters to the agent; its status and its JSON come
     * back (an agent's 4xx with its error message included).
     */
    async control(
      account: Viewer,
      id: number,
      method: string,
      path: string,
      body: Buffer | undefined,
      query: string,
    ): Promise<ProxiedAnswer> {
      const row = await requireServer(account.id, id);
      requirePermission(account, method === 'GET' ? 'control.read' : 'control.edit');
      const res = await proxy(row, method, `/${path}`, body, query);
      // The agent's 401 and 403 are about the console's key and address, never the user's session or
      // token, and its 3xx and 5xx are failures of the agent: all are 502 (docs/decisions.md).
      if (res.status === 401 || res.status === 403)
        throw new AppError(502, `${agentOf(row)}: ${explainAgentStatus(res.status)}`);
      if (res.status < 200 || (res.status > 299 && res.status < 400) || res.status > 499)
        throw new AppError(502, `${agentOf(row)} failed: HTTP ${res.status}${agentErrorText(res)}`);
      return { status: res.status, contentType: JSON_TYPE, body: jsonFromAgent(row, res) };
    },

    async section(account: Viewer, id: number, name: string, range: HistoryRange) {
      const row = await requireServer(account.id, id);
      // The agent's attack list is read through the control API, so it needs what reading that needs.
      if (name === 'attacks') requirePermission(account, 'control.read');
      const now = clock();
      switch (name) {
        case 'overview':
          return dashboardServer(row, now);
        case 'score': {
          const base = row.score_base ? (JSON.parse(row.score_base) as ScoreBase) : null;
          return { ...serverScore(row.last_seen, base, now), weights: WEIGHTS };
        }
        case 'facts':
          return {
            hostname: row.hostname,
            public_ip: row.public_ip,
            agent_version: row.agent_version,
            facts: parseJson<Record<string, unknown>>(row.facts, {}),
          };
        case 'history':
          return history(row.id, range, now);
        case 'benchmarks':
          return { runs: (await listRuns(db, row.id)).map(runView) };
        case 'attacks': {
          try {
            const res = await proxy(row, 'GET', '/attacks');
            if (res.status !== 200) return { available: false, error: explainAgentStatus(res.status) };
            const answer = JSON.parse(jsonFromAgent(row, res).toString('utf8')) as unknown;
            if (answer === null || typeof answer !== 'object' || Array.isArray(answer))
              return { available: false, error: `${agentOf(row)} answered something other than an attack list` };
            return { ...answer, available: true };
          } catch (err) {
            if (err instanceof AppError) return { available: false, error: err.message };
            throw err;
          }
        }
        default:
          throw badRequest('name: expected one of overview, score, history, benchmarks, attacks, facts');
      }
    },
  };

  async function history(serverId: number, range: HistoryRange, now: number) {
    const span = HISTORY_RANGES[range];
    const rows = await samplesBetween(db, serverId, now - span, now);
    const bucketMs = Math.max(1000, Math.ceil(span / HISTORY_POINTS));
    const buckets = new Map<number, typeof rows>();
    for (const row of rows) {
      const key = Math.floor(row.ts / bucketMs) * bucketMs;
      const list = buckets.get(key);
      if (list) list.push(row);
      else buckets.set(key, [row]);
    }
    const avg = (list: typeof rows, pick: (r: (typeof rows)[number]) => number) =>
      Math.round((list.reduce((a, r) => a + pick(r), 0) / list.length) * 100) / 100;
    const samples = [...buckets.entries()].map(([ts, list]) => ({
      ts,
      cpu_pct: avg(list, (r) => r.cpu_pct),
      mem_used_mb: avg(list, (r) => r.mem_used_mb),
      mem_total_mb: avg(list, (r) => r.mem_total_mb),
      disk_used_pct: avg(list, (r) => r.disk_used_pct),
      load1: avg(list, (r) => r.load1),
      rx_bps: avg(list, (r) => r.rx_bps),
      tx_bps: avg(list, (r) => r.tx_bps),
    }));
    return { range, from: now - span, to: now, bucket_ms: bucketMs, samples };
  }
}

const isHttps = (apiUrl: string) => /^https:/i.test(apiUrl);

/** A pin only makes sense for an https address; the routes have already put it in canonical form. */
function pinFor(apiUrl: string, pin: string | null): string | null {
  if (pin && !isHttps(apiUrl)) throw badRequest('tls_fingerprint: only for an https api_url (http has no certificate)');
  return pin;
}

type RunRow = Awaited<ReturnType<typeof listRuns>>[number];

/** The dashboard's view of a run, any status, log and checks included; never the run token. */
export function runView(run: RunRow) {
  return {
    id: run.id,
    label: run.label,
    status: run.status,
    scores: {
      cpu: run.score_cpu,
      disk: run.score_disk,
      network: run.score_network,
      stability: run.score_stability,
      total: run.score_total,
    },
    verified: run.verified === 1,
    checks: JSON.parse(run.checks) as unknown[],
    hardware: JSON.parse(run.hardware) as Record<string, unknown>,
    log: run.log,
    error: run.error,
    created_at: run.created_at,
    started_at: run.started_at,
    finished_at: run.finished_at,
  };
}

export type ServersService = ReturnType<typeof createServersService>;
