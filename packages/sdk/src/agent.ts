import { CONTROL_PATHS, type ControlPath, isControlPath } from '@palisade/protocol/control';
import { Transport, type TransportOptions, unwrap } from './transport.js';

export interface AgentClientOptions extends TransportOptions {
  /** The agent key `agk_…` printed by `palisade-agent key`. */
  key: string;
}

export { CONTROL_PATHS, type ControlPath };

/** Talks to an agent directly with its key. Agent answers are plain JSON (no `{data}` envelope). */
export class AgentClient {
  private readonly transport: Transport;
  private readonly key: string;

  constructor(options: AgentClientOptions) {
    this.transport = new Transport(options);
    this.key = options.key;
  }

  private async call<T>(method: string, path: string, body?: unknown, query?: Record<string, string>): Promise<T> {
    const bytes = body === undefined ? undefined : JSON.stringify(body);
    const answer = await this.transport.send({
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

  health() {
    return this.call<{ status: string; version: string; uptime_s: number }>('GET', '/health');
  }

  metrics() {
    return this.call<Record<string, unknown>>('GET', '/metrics');
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
