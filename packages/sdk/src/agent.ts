import { FINGERPRINT_EXPECTED, normalizeFingerprint } from '@palisade/protocol/agent-address';
import type { AgentHealth, AgentMetrics } from '@palisade/protocol/agent-api';
import { CONTROL_PATHS, type ControlPath, isControlPath } from '@palisade/protocol/control';
import type {
  ControlInput,
  ControlMethod,
  ControlOperations,
  ControlOutput,
  FeedPageAnswer,
  LookupAnswer,
} from '@palisade/protocol/control-schemas';
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

  /**
   * One control call; the body and the answer are typed by the path and method
   * (packages/protocol/src/control-schemas.ts): `control('POST', 'whitelist', {ip: '203.0.113.7'})`.
   */
  control<P extends ControlPath, M extends ControlMethod & keyof ControlOperations[P]>(
    method: M,
    path: P,
    body?: ControlInput<P, M>,
    query?: Record<string, string>,
  ): Promise<ControlOutput<P, M>> {
    if (!isControlPath(path)) throw new TypeError(`unknown control path ${path}`);
    // A GET reads no body: its input (`GET blacklist`'s ip, source, cursor, limit) is the query.
    if (method === 'GET' && body !== undefined && body !== null && typeof body === 'object')
      return this.call<ControlOutput<P, M>>(method, `/${path}`, undefined, {
        ...(Object.fromEntries(Object.entries(body).map(([k, v]) => [k, String(v)])) as Record<string, string>),
        ...query,
      });
    return this.call<ControlOutput<P, M>>(method, `/${path}`, body, query);
  }

  /** "Why is this address blocked?": every source holding `ip` and what the firewall does (docs/protection.md). */
  lookUp(ip: string): Promise<LookupAnswer> {
    return this.call<LookupAnswer>('GET', '/blacklist', undefined, { ip });
  }

  /** One page of a feed's entries in address order; pass the previous page's `next_cursor` as `cursor`. */
  feedPage(feed: string, page: { cursor?: string; limit?: number } = {}): Promise<FeedPageAnswer> {
    return this.call<FeedPageAnswer>('GET', '/blacklist', undefined, {
      source: `feed:${feed}`,
      ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
      ...(page.limit !== undefined ? { limit: String(page.limit) } : {}),
    });
  }

  /** A control call whose body is not known when compiling (the CLI's `--data`); the agent checks it. */
  controlRaw(method: ControlMethod, path: ControlPath, body?: unknown, query?: Record<string, string>) {
    if (!isControlPath(path)) throw new TypeError(`unknown control path ${path}`);
    return this.call<unknown>(method, `/${path}`, body, query);
  }
}
