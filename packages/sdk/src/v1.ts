import type { Account, BenchmarkRun, ServerDetail, ServerSummary } from '@palisade/protocol';
import { type ConsoleClientOptions, Transport, teamHeader, unwrap } from './transport.js';

export interface V1ClientOptions extends ConsoleClientOptions {
  /** A personal access token `svc_…`. */
  token: string;
}

/** The read-only v1 API with a personal access token. */
export class V1Client {
  private readonly transport: Transport;
  private readonly token: string;
  private readonly team: Record<string, string>;

  constructor(options: V1ClientOptions) {
    this.transport = new Transport(options);
    this.token = options.token;
    this.team = teamHeader(options.team);
  }

  private async get<T>(path: string): Promise<T> {
    const answer = await this.transport.send({
      method: 'GET',
      path,
      headers: () => ({ authorization: `Bearer ${this.token}`, accept: 'application/json', ...this.team }),
    });
    return unwrap<T>(answer);
  }

  /** The person the token belongs to and the team it acts in, with their role there. */
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
