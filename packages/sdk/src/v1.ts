import type { Account, BenchmarkRun, ServerDetail, ServerSummary } from '@palisade/protocol';
import { Transport, type TransportOptions, unwrap } from './transport.js';

export interface V1ClientOptions extends TransportOptions {
  /** A personal access token `svc_…`. */
  token: string;
}

/** The read-only v1 API with a personal access token. */
export class V1Client {
  private readonly transport: Transport;
  private readonly token: string;

  constructor(options: V1ClientOptions) {
    this.transport = new Transport(options);
    this.token = options.token;
  }

  private async get<T>(path: string): Promise<T> {
    const answer = await this.transport.send({
      method: 'GET',
      path,
      headers: () => ({ authorization: `Bearer ${this.token}`, accept: 'application/json' }),
    });
    return unwrap<T>(answer);
  }

  me(): Promise<Account> {
    return this.get<Account>('/api/v1/me');
  }

  async servers(): Promise<ServerSummary[]> {
    return (await this.get<{ servers: ServerSummary[] }>('/api/v1/servers')).servers;
  }

  server(id: number): Promise<ServerDetail> {
    return this.get<ServerDetail>(`/api/v1/servers/${encodeURIComponent(String(id))}`);
  }

  async benchmarks(serverId: number): Promise<BenchmarkRun[]> {
    return (
      await this.get<{ benchmarks: BenchmarkRun[] }>(
        `/api/v1/servers/${encodeURIComponent(String(serverId))}/benchmarks`,
      )
    ).benchmarks;
  }
}
