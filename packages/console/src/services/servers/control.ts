import type { ControlPath } from '@palisade/protocol';
import { pinFor } from './agent-client.js';
import type { ServersContext, Viewer } from './context.js';
import type { ProxiedAnswer } from './proxy.js';
import { createRecheck } from './recheck.js';

/** The calls to a server's agent an account makes through the console, each checked against its permissions. */
export function createServerControl(ctx: ServersContext) {
  const { db, clock, agents } = ctx;

  return {
    /** The dashboard's connection test, of a saved server or of an address not saved yet. */
    async test(
      accountId: number,
      input: { server_id: number } | { api_url: string; api_key: string; tls_fingerprint?: string | null },
    ) {
      if ('server_id' in input) return agents.checkSaved(await agents.requireServer(accountId, input.server_id));
      return agents.check({
        apiUrl: input.api_url,
        apiKey: input.api_key,
        tlsFingerprint: pinFor(input.api_url, input.tls_fingerprint ?? null),
      });
    },

    async metrics(accountId: number, id: number): Promise<ProxiedAnswer> {
      return agents.proxy.metrics(await agents.requireServer(accountId, id));
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
      const row = await ctx.serverFor(viewer, id, method === 'GET' ? 'control.read' : 'control.edit');
      return agents.proxy.control(row, method, path, body, query);
    },

    /**
     * Looks at the servers checking in without waiting for a viewer (recheck.ts): direct ones get a
     * light /health probe, outbound ones are judged by their link, so a refused connection turns a
     * server unreachable within a round, and an answer online again.
     */
    recheckUnreachable: createRecheck({
      db,
      clock,
      recordCall: agents.recordCall,
      checkSaved: agents.checkSaved,
      connectionOf: agents.connectionOf,
    }),
  };
}
