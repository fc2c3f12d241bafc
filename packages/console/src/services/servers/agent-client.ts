import type { ConnectionCheck } from '@palisade/protocol';
import { badRequest } from '../../errors.js';
import { type GuardedClient, OutboundError, type OutboundResponse } from '../../outbound/guarded-client.js';
import type { LinkRegistry } from './links.js';

export const isHttps = (apiUrl: string) => /^https:/i.test(apiUrl);

/** A pin only makes sense for an https address; the routes have already put it in canonical form. */
export function pinFor(apiUrl: string, pin: string | null): string | null {
  if (pin && !isHttps(apiUrl)) throw badRequest('tls_fingerprint: only for an https api_url (http has no certificate)');
  return pin;
}

/** Where an agent lives and the key it accepts. The key never leaves this module except in the Authorization header. */
export interface AgentTarget {
  apiUrl: string;
  apiKey: string;
  /** The pinned SHA-256 of the agent's own TLS certificate (`servers.tls_fingerprint`); null: CA chain. */
  tlsFingerprint?: string | null;
  /** The saved server's id: its calls go down its outbound link when this process holds one. */
  serverId?: number;
  /**
   * How the saved server is reached (`servers.connect`): an `outbound` server only through its link,
   * never at `apiUrl` (the address its registration came from, maybe a NAT's, is not the agent's).
   */
  connect?: 'direct' | 'outbound';
}

export type { ConnectionCheck };

/** A certificate that is not the pinned one (or, unpinned, not CA-signed), worded for the user. */
export function explainTlsFailure(err: OutboundError): string {
  const seen = err.certificate?.presented ?? '(none)';
  if (err.certificate?.expected)
    return `tls_fingerprint: the agent presented ${seen}, expected ${err.certificate.expected}`;
  return (
    `tls_fingerprint: the agent's certificate is not signed by a trusted authority (${err.certificate?.untrusted ?? 'unverified'}); ` +
    `it presented ${seen}: if that is the fingerprint the agent printed, save it as tls_fingerprint`
  );
}

/** What an agent answer means for the user, worded without the key or the agent's port. */
export function explainAgentStatus(status: number): string {
  if (status === 401)
    return 'the agent rejected the key (it may have been rotated: run `palisade-agent key` and save the new key)';
  if (status === 403) return "the agent refused the console's address: add it to metrics.whitelist in the agent config";
  return `the agent answered HTTP ${status}`;
}

function agentUrl(apiUrl: string, path: string, query?: string): string {
  const base = apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`;
  const url = new URL(path.replace(/^\//, ''), base);
  if (query) url.search = query;
  return url.toString();
}

/**
 * The one way the console calls an agent: down the server's outbound link when this process holds
 * one (docs/agent.md, "Outbound link"), else over HTTP to its address (a direct server only: an
 * outbound one whose link is down is unreachable at once); the same answers, timeouts,
 * size caps and failures either way, so the proxy checks both alike.
 */
export function createAgentClient(
  outbound: GuardedClient,
  timeoutMs: number,
  clock: () => number = Date.now,
  links: Pick<LinkRegistry, 'caller'> | null = null,
) {
  async function call(
    target: AgentTarget,
    method: string,
    path: string,
    body?: Buffer | string,
    query?: string,
  ): Promise<OutboundResponse> {
    // A direct server is called at its address even when some process still holds a link of it.
    const linked = links && target.connect !== 'direct' ? await links.caller(target.serverId) : null;
    // Link down: unreachable at once, never a call (with the key) to another address.
    if (!linked && target.connect === 'outbound') throw new OutboundError('unreachable', 'the outbound link is down');
    if (linked) {
      return linked({
        method,
        path: `/${path.replace(/^\//, '')}`,
        query: query ?? '',
        authorization: `Bearer ${target.apiKey}`,
        ...(body !== undefined ? { body } : {}),
        timeoutMs,
      });
    }
    let url: string;
    try {
      url = agentUrl(target.apiUrl, path, query);
    } catch {
      throw new OutboundError('refused', 'the saved agent address is not a valid URL'); // never a 500 that logs it
    }
    return outbound.request({
      method,
      url,
      headers: {
        authorization: `Bearer ${target.apiKey}`,
        accept: 'application/json',
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body } : {}),
      timeoutMs,
      tlsFingerprint: target.tlsFingerprint ?? null,
    });
  }

  return {
    call,

    /** The dashboard's connection test: GET /health with the key. Never throws for a network failure. */
    async check(target: AgentTarget): Promise<ConnectionCheck> {
      const started = clock();
      try {
        const res = await call(target, 'GET', '/health');
        const latency_ms = Math.max(0, clock() - started);
        if (res.status !== 200)
          return { reachable: true, status: res.status, latency_ms, error: explainAgentStatus(res.status) };
        let version: unknown;
        try {
          const parsed = JSON.parse(res.body.toString('utf8')) as { status?: unknown; version?: unknown };
          if (parsed.status !== 'ok') throw new Error('not an agent');
          version = parsed.version;
        } catch {
          return {
            reachable: true,
            status: res.status,
            latency_ms,
            error: 'this address answers, but not as a Palisade agent',
          };
        }
        return {
          reachable: true,
          status: 200,
          latency_ms,
          ...(typeof version === 'string' ? { agent_version: version } : {}),
        };
      } catch (err) {
        if (!(err instanceof OutboundError)) throw err;
        const error =
          err.kind === 'tls'
            ? explainTlsFailure(err)
            : err.kind === 'refused'
              ? err.message.replace(/^(forbidden address: )?/, 'forbidden address: ')
              : `agent unreachable: ${err.message}`;
        return { reachable: false, status: null, latency_ms: null, error };
      }
    },
  };
}

export type AgentClient = ReturnType<typeof createAgentClient>;
