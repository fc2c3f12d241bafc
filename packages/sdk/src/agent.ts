import { FINGERPRINT_EXPECTED, normalizeFingerprint } from '@palisade/protocol/agent-address';
import type { AgentHealth, AgentMetrics } from '@palisade/protocol/agent-api';
import { CONTROL_PATHS, type ControlPath, isControlPath } from '@palisade/protocol/control';
import { PalisadeNetworkError } from './errors.js';
import { pinnedFetch } from './pinned-fetch.js';
import { Transport, type TransportOptions, unwrap } from './transport.js';

export interface AgentClientOptions extends TransportOptions {
  /** The agent key `agk_…` printed by `palisade-agent key`. */
  key: string;
  /**
   * For an agent with `metrics.tls = on`: the SHA-256 fingerprint of its certificate, as the agent
   * prints it (`AB:CD:…`, or 64 hex digits). The certificate must match it; no CA is consulted.
   */
  fingerprint?: string;
}

export { CONTROL_PATHS, type ControlPath };

/** Talks to an agent directly with its key. Agent answers are plain JSON (no `{data}` envelope). */
export class AgentClient {
  private readonly transport: Transport;
  private readonly key: string;
  private readonly pinned: boolean;

  constructor(options: AgentClientOptions) {
    let pinned: Pick<TransportOptions, 'fetch'> = {};
    if (options.fingerprint !== undefined) {
      const pin = normalizeFingerprint(options.fingerprint);
      if (!pin) throw new TypeError(`fingerprint: ${FINGERPRINT_EXPECTED}`);
      if (!/^https:\/\//i.test(options.baseUrl)) throw new TypeError('fingerprint: only for an https baseUrl');
      pinned = { fetch: pinnedFetch(pin) };
    }
    this.transport = new Transport({ ...options, ...pinned });
    this.key = options.key;
    this.pinned = options.fingerprint !== undefined;
  }

  private async call<T>(method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<T> {
    const bytes = body === undefined ? undefined : JSON.stringify(body);
    const answer = await this.sendExplained({
      method,
      path,
      ...(query ? { query } : {}),
      ...(bytes !== undefined ? { body: bytes } : {}),
      headers: () => ({
        authorization: `Bearer ${this.key}`,
        accept: 'application/json',
        ...(bytes !== undefined ? { 'content-type': 'application/json' } : {}),
      }),
    });
    return unwrap<T>(answer);
  }

  /** An agent's self-made certificate fails the CA check: say what to do about it. */
  private async sendExplained(req: Parameters<Transport['send']>[0]) {
    try {
      return await this.transport.send(req);
    } catch (err) {
      if (err instanceof PalisadeNetworkError && !this.pinned && /CERT|SELF_SIGNED/.test(err.message)) {
        throw new PalisadeNetworkError(
          `${err.message} (an agent with metrics.tls = on uses its own certificate: pass the fingerprint it prints as \`fingerprint\`, or --agent-fingerprint)`,
          err.timedOut,
        );
      }
      throw err;
    }
  }

  health() {
    return this.call<AgentHealth>('GET', '/health');
  }

  metrics() {
    return this.call<AgentMetrics>('GET', '/metrics');
  }

  control<T = unknown>(
    method: 'GET' | 'POST' | 'DELETE',
    path: ControlPath,
    body?: unknown,
    query?: Record<string, string>,
  ) {
    if (!isControlPath(path)) throw new TypeError(`unknown control path ${path}`);
    return this.call<T>(method, `/${path}`, body, query);
  }
}
