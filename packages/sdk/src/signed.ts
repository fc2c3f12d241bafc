import type {
  Me,
  OpenTicketRequest,
  Rollout,
  RolloutServer,
  StartRolloutRequest,
  TicketReplyRequest,
} from '@palisade/protocol';
import { SVC1_HEADERS, signRequest } from '@palisade/protocol/svc1';
import { type ConsoleClientOptions, Transport, teamHeader, unwrap } from './transport.js';

export interface SignedClientOptions extends ConsoleClientOptions {
  /** A signing key `svck_…`. */
  key: string;
  /** Clock for the timestamp (Unix ms); for tests. */
  now?: () => number;
}

export interface Ticket {
  id: number;
  ref: string;
  subject: string;
  status: string;
  [field: string]: unknown;
}

/**
 * The SVC1-signed console routes. Each request signs the exact bytes it sends, with a fresh nonce
 * and timestamp for every attempt (retries too).
 */
export class SignedClient {
  private readonly transport: Transport;
  private readonly key: string;
  private readonly now: () => number;
  private readonly team: Record<string, string>;
  /** Signatures of writes sent lately, with their timestamps (Unix s): a write is never signed the same twice. */
  private readonly sentWrites = new Map<string, number>();

  constructor(options: SignedClientOptions) {
    this.transport = new Transport(options);
    this.key = options.key;
    this.now = options.now ?? Date.now;
    this.team = teamHeader(options.team);
  }

  async request<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const bytes = body === undefined ? undefined : JSON.stringify(body);
    const answer = await this.transport.send({
      method,
      path,
      ...(bytes !== undefined ? { body: bytes } : {}),
      headers: () => ({
        accept: 'application/json',
        ...this.team,
        ...(bytes !== undefined ? { 'content-type': 'application/json' } : {}),
        // The signature covers the path without its query, as the console checks it (docs/signing.md).
        ...this.sign(method, path.split('?')[0]!, bytes ?? ''),
      }),
    });
    return unwrap<T>(answer, ({ reason }) => {
      if (reason !== 'stale' && reason !== 'future') return null;
      const serverDate = Date.parse(answer.headers.get('date') ?? '');
      if (!Number.isFinite(serverDate)) return 'check this machine’s clock: signatures are valid for ±300 s';
      const skewS = Math.round((this.now() - serverDate) / 1000);
      return `this machine’s clock is ${Math.abs(skewS)} s ${skewS > 0 ? 'ahead of' : 'behind'} the console’s; signatures are valid for ±300 s (sync it with NTP)`;
    });
  }

  /**
   * Signs one attempt. The console accepts each write signature once (docs/signing.md, "Replay"), and
   * the signature covers only timestamp, method, path and body: a second identical write within the
   * same second is signed with the next free second instead (still inside the ±300 s window).
   */
  private sign(method: string, path: string, body: string): Record<string, string> {
    const nowS = Math.floor(this.now() / 1000);
    if (method === 'GET') return signRequest({ key: this.key, method, path, body, timestamp: nowS });
    for (const [signature, ts] of this.sentWrites) if (ts < nowS - 600) this.sentWrites.delete(signature);
    for (let ts = nowS; ; ts += 1) {
      const headers = signRequest({ key: this.key, method, path, body, timestamp: ts });
      const signature = headers[SVC1_HEADERS.signature]!;
      if (this.sentWrites.has(signature) && ts < nowS + 300) continue;
      this.sentWrites.set(signature, ts);
      return headers;
    }
  }

  /** The person the key belongs to and the team it acts in, with their role there. */
  me() {
    return this.request<Me>('GET', '/api/account/me');
  }

  async servers() {
    return (await this.request<{ servers: Record<string, unknown>[] }>('GET', '/api/servers')).servers;
  }

  async server(id: number) {
    return (await this.request<{ server: Record<string, unknown> }>('GET', `/api/servers/${id}`)).server;
  }

  async products() {
    return (await this.request<{ products: Record<string, unknown>[] }>('GET', '/api/products')).products;
  }

  billingSummary() {
    return this.request<Record<string, unknown>>('GET', '/api/billing/summary');
  }

  /** Every ticket of the account, latest activity first: the list's pages one after another (docs/api.md). */
  async tickets() {
    const all: Ticket[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page: { tickets: Ticket[]; next_cursor?: string | null } = await this.request(
        'GET',
        `/api/tickets${query}`,
      );
      all.push(...page.tickets);
      cursor = page.next_cursor ?? null;
    } while (cursor);
    return all;
  }

  async ticket(id: number) {
    return (await this.request<{ ticket: Ticket }>('GET', `/api/tickets/${id}`)).ticket;
  }

  /** The body the console checks with `openTicketRequest` (packages/protocol/src/requests/tickets.ts). */
  async openTicket(input: OpenTicketRequest) {
    return (await this.request<{ ticket: Ticket }>('POST', '/api/tickets', input)).ticket;
  }

  /** The agent version the console serves, how many servers run another, and the rollouts, newest first (docs/fleet.md, "Agent updates"). */
  agentUpdates() {
    return this.request<{ served_version: string | null; signed: boolean; outdated: number; rollouts: Rollout[] }>(
      'GET',
      '/api/agent-updates',
    );
  }

  /** One rollout and each of its servers. */
  agentUpdate(id: number) {
    return this.request<{ rollout: Rollout; servers: RolloutServer[] }>('GET', `/api/agent-updates/${id}`);
  }

  /** Starts a rollout of the served agent version; the body the console checks with `startRolloutRequest`. */
  async startAgentUpdate(input: StartRolloutRequest) {
    return (await this.request<{ rollout: Rollout }>('POST', '/api/agent-updates', input)).rollout;
  }

  /** Cancels a running rollout: servers not yet offered are skipped. */
  async cancelAgentUpdate(id: number) {
    return (await this.request<{ rollout: Rollout }>('POST', `/api/agent-updates/${id}/cancel`, {})).rollout;
  }

  reply(ticketId: number, message: string) {
    return this.request<Record<string, unknown>>('POST', `/api/tickets/${ticketId}/messages`, {
      message,
    } satisfies TicketReplyRequest);
  }
}
