import { isUtf8 } from 'node:buffer';
import { type ControlPath, hashToken } from '@palisade/protocol';
import { answerSchema, checkControl, controlOperation } from '@palisade/protocol/control-schemas';
import * as z from 'zod/mini';
import type { ServerRow } from '../../db/schema.js';
import { AppError } from '../../errors.js';
import { OutboundError, type OutboundResponse } from '../../outbound/guarded-client.js';
import type { SecretBox } from '../../secrets.js';
import { type AgentClient, type AgentTarget, explainAgentStatus, explainTlsFailure } from './agent-client.js';

const JSON_TYPE = 'application/json; charset=utf-8';
/** How many opened agent keys a process keeps (one per server it has called lately). */
const OPENED_KEYS_MAX = 10_000;
/** What an agent's refusal (4xx) must be: `{"error": "<the field, then what was expected>"}`. */
const AGENT_ERROR = z.object({ error: z.string() });

/** An agent's answer as the console passes it on. */
export interface ProxiedAnswer {
  status: number;
  contentType: string;
  body: Buffer;
}

/** What one call of the console to an agent came to: answered, or failed and why (docs/fleet.md, "Server states"). */
export type CallOutcome = { ok: true } | { ok: false; error: string };

/** Where the proxy reports each call's outcome; the servers service stores it for serverState(). */
export type CallRecorder = (row: ServerRow, outcome: CallOutcome) => Promise<void>;

/** How errors name an agent: by the server's name, never by its address. */
export const agentOf = (row: Pick<ServerRow, 'name'>) => `the agent of server "${row.name}"`;

const isJson = (res: OutboundResponse) => /^application\/json\s*(;|$)/i.test(String(res.headers['content-type'] ?? ''));

/**
 * Calls to a saved server's agent on the user's behalf (metrics, control, the attack list): the
 * stored key is opened here, and every failure is worded with the server's name.
 */
export function createAgentProxy(agents: AgentClient, secrets: SecretBox, record: CallRecorder) {
  /**
   * Agent keys already opened, by their sealed text: AES-GCM once a key, not once a call. A changed key
   * is sealed anew under a new random IV, so it is another entry; the map is emptied when it is full.
   */
  const opened = new Map<string, string>();
  const openKey = (sealed: string) => {
    let key = opened.get(sealed);
    if (key === undefined) {
      key = secrets.open(sealed);
      if (opened.size >= OPENED_KEYS_MAX) opened.clear();
      opened.set(sealed, key);
    }
    return key;
  };

  const targetOf = (row: ServerRow): AgentTarget => {
    let apiKey: string;
    try {
      apiKey = openKey(row.api_key_enc);
    } catch {
      // A key sealed under another secret key (PALISADE_SECRET_KEY changed, the key file replaced)
      // or a row written by hand: the user can fix it, so it is said in words, not as a 500.
      throw new AppError(
        502,
        `the stored key for ${agentOf(row)} cannot be read (was the console's secret key changed?); save the agent key again under Agent key`,
      );
    }
    return {
      apiUrl: row.api_url,
      apiKey,
      tlsFingerprint: row.tls_fingerprint,
      serverId: row.id,
      connect: row.connect,
    };
  };

  /**
   * Calls the agent and records whether it answered: a network failure (a 502 with a plain reason) or
   * a refused key or address counts as a failed call. Any other status is an answer: an agent that
   * fails one operation (4xx, 5xx) is still reachable, and the caller reports that failure itself.
   */
  async function call(row: ServerRow, method: string, path: string, body?: Buffer, query?: string) {
    let res: OutboundResponse;
    try {
      res = await agents.call(targetOf(row), method, path, body, query);
    } catch (err) {
      if (!(err instanceof OutboundError)) throw err;
      const failure =
        err.kind === 'tls'
          ? explainTlsFailure(err)
          : err.kind === 'too_large'
            ? `${agentOf(row)} answered too much: ${err.message}`
            : err.kind === 'refused'
              ? `agent address refused: ${err.message}`
              : 'agent unreachable';
      await record(row, { ok: false, error: failure });
      throw new AppError(502, failure);
    }
    const failed = res.status === 401 || res.status === 403;
    await record(row, failed ? { ok: false, error: explainAgentStatus(res.status) } : { ok: true });
    return res;
  }

  /**
   * An agent's answer is passed on only as JSON the console parsed: an agent that answers a page
   * (text/html with a script) must not get it served from the console's origin. Returns the parsed
   * value; the caller writes it again, or passes on `res.body` itself (agentJsonBytes).
   */
  function parseAgentJson(row: ServerRow, res: OutboundResponse): unknown {
    const type = String(res.headers['content-type'] ?? '');
    if (!isJson(res)) {
      throw new AppError(502, `${agentOf(row)} answered ${type.split(';')[0] || 'without a content type'}, not JSON`);
    }
    try {
      return JSON.parse(res.body.toString('utf8'));
    } catch {
      throw new AppError(502, `${agentOf(row)} answered invalid JSON`);
    }
  }

  /**
   * The bytes of an answer that parsed as JSON: the agent's own when they are valid UTF-8 (what was
   * parsed is then exactly what is served, as application/json with nosniff), else the value written
   * again. Saves the second serialization on the hot /metrics path (docs/decisions.md).
   */
  const agentJsonBytes = (res: OutboundResponse, value: unknown) =>
    isUtf8(res.body) ? res.body : Buffer.from(JSON.stringify(value));

  /** `: <its error>` when a failed agent answered `{"error": "<text>"}` as JSON, else nothing. */
  function agentErrorText(res: OutboundResponse): string {
    if (!isJson(res)) return '';
    try {
      const error = (JSON.parse(res.body.toString('utf8')) as { error?: unknown } | null)?.error;
      return typeof error === 'string' ? `: ${error.slice(0, 200)}` : '';
    } catch {
      return '';
    }
  }

  /**
   * Holds a control answer to the contract (packages/protocol/src/control-schemas.ts): a 2xx is the
   * answer of that path, method and query (`GET blacklist?ip=` a lookup), a 4xx is `{error}`. An
   * agent answering anything else is a 502 naming the server, not a page the dashboard half-draws.
   */
  function checkControlAnswer(
    row: ServerRow,
    method: string,
    path: ControlPath,
    query: string,
    status: number,
    answer: unknown,
  ) {
    const params = new URLSearchParams(query);
    const op = controlOperation(path, method);
    const schema = status >= 400 ? AGENT_ERROR : op ? answerSchema(op, (p) => params.has(p)) : null;
    const checked = schema ? checkControl(schema, answer) : null;
    if (checked?.ok) return;
    throw new AppError(
      502,
      `${agentOf(row)} answered ${method} ${path} with something the control contract does not allow (${
        checked ? checked.problem : 'no such method'
      }); update the agent`,
    );
  }

  return {
    targetOf,
    call,

    /**
     * The SHA-256 of the agent key saved for the server, which a link must prove it holds
     * (linkProof(), docs/agent.md "Outbound link"); null when the stored key cannot be opened.
     */
    keySha256(row: ServerRow): string | null {
      try {
        return hashToken(openKey(row.api_key_enc));
      } catch {
        return null;
      }
    },

    /** The agent's /metrics, once it parsed as JSON. */
    async metrics(row: ServerRow): Promise<ProxiedAnswer> {
      const res = await call(row, 'GET', '/metrics');
      if (res.status !== 200) throw new AppError(502, explainAgentStatus(res.status));
      return { status: 200, contentType: JSON_TYPE, body: agentJsonBytes(res, parseAgentJson(row, res)) };
    },

    /**
     * Forwards method, body and the query parameters the contract knows (the route keeps only those)
     * to the agent; its status and its JSON come back (an agent's 4xx with its error message
     * included), once the JSON is what the contract says that path, method and query answer.
     */
    async control(row: ServerRow, method: string, path: ControlPath, body: Buffer | undefined, query: string) {
      const res = await call(row, method, `/${path}`, body, query);
      // The agent's 401 and 403 are about the console's key and address, never the user's session or
      // token, and its 3xx and 5xx are failures of the agent: all are 502 (docs/decisions.md).
      if (res.status === 401 || res.status === 403)
        throw new AppError(502, `${agentOf(row)}: ${explainAgentStatus(res.status)}`);
      if (res.status < 200 || (res.status > 299 && res.status < 400) || res.status > 499)
        throw new AppError(502, `${agentOf(row)} failed: HTTP ${res.status}${agentErrorText(res)}`);
      const answer = parseAgentJson(row, res);
      checkControlAnswer(row, method, path, query, res.status, answer);
      // Written again: what is served is exactly the value the contract check saw.
      return {
        status: res.status,
        contentType: JSON_TYPE,
        body: Buffer.from(JSON.stringify(answer)),
      } satisfies ProxiedAnswer;
    },

    /** The agent's attack list for the dashboard; a failure is part of the answer, never an error. */
    async attacks(row: ServerRow) {
      try {
        const res = await call(row, 'GET', '/attacks');
        if (res.status !== 200) return { available: false, error: explainAgentStatus(res.status) };
        const answer = parseAgentJson(row, res);
        if (answer === null || typeof answer !== 'object' || Array.isArray(answer))
          return { available: false, error: `${agentOf(row)} answered something other than an attack list` };
        return { ...answer, available: true };
      } catch (err) {
        if (err instanceof AppError) return { available: false, error: err.message };
        throw err;
      }
    },
  };
}

export type AgentProxy = ReturnType<typeof createAgentProxy>;
