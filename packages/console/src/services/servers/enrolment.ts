import { generateToken, hashToken, isWellFormedToken, type RegistrationConnect } from '@palisade/protocol';
import type { ServerRow } from '../../db/schema.js';
import { AppError, badRequest, conflict } from '../../errors.js';
import { findProduct } from '../../repositories/products.repository.js';
import {
  countProductServers,
  deleteServer,
  findServer,
  findServerByDaemonToken,
  insertServer,
  updateServer,
} from '../../repositories/servers.repository.js';
import { type AgentTarget, explainAgentStatus, pinFor } from './agent-client.js';
import { agentRefused, type ServersContext, type Viewer } from './context.js';

export interface NewServer {
  product_id: number;
  name: string;
  api_url: string;
  api_key: string;
  /** The agent's own certificate, pinned (canonical `AB:CD:…`); only for https addresses. */
  tls_fingerprint?: string | null;
}

/**
 * How servers join an account and how their agents prove who they are: added by the account (the
 * console enrols the agent), registered by the agent itself, or enrolled by hand; daemon tokens.
 */
export function createEnrolment(ctx: ServersContext) {
  const { db, clock, secrets, agents, changes: feed } = ctx;

  /**
   * How a registering agent is reached: `direct` needs its /health to answer at the address;
   * `outbound` is not asked now (its link carries every call, and agents.ts checks it once up);
   * `auto` asks, and an agent the console did not reach (no answer, an address it may not call, a
   * certificate that is not the agent's: the key is never sent there) is `outbound`; one that
   * answered and refused the key is refused as `direct` is (docs/decisions.md, "Registering an agent
   * the console cannot reach").
   */
  async function reachFor(target: AgentTarget, connect: RegistrationConnect) {
    if (connect === 'outbound') return { connect: 'outbound' as const, agentVersion: null };
    const check = await agents.check(target);
    if ('error' in check && connect === 'auto' && !check.reachable)
      return { connect: 'outbound' as const, agentVersion: null };
    if ('error' in check) throw agentRefused(check);
    return { connect: 'direct' as const, agentVersion: check.agent_version ?? null };
  }

  /** Checks the product, its room and how the agent is reached, then stores the server (no daemon token yet). */
  async function insertChecked(
    accountId: number,
    input: NewServer,
    how: { connect: RegistrationConnect; version?: string } = { connect: 'direct' },
  ): Promise<ServerRow> {
    const product = await findProduct(db, accountId, input.product_id);
    if (!product) throw badRequest('product_id: no product with this id on your account');
    if ((await countProductServers(db, product.id)) >= product.server_limit) {
      throw conflict(
        `product_id: the ${product.name} plan allows ${product.server_limit} servers; remove one or add a product`,
      );
    }
    const pin = pinFor(input.api_url, input.tls_fingerprint ?? null);
    const reach = await reachFor({ apiUrl: input.api_url, apiKey: input.api_key, tlsFingerprint: pin }, how.connect);
    return insertServer(db, {
      account_id: accountId,
      product_id: product.id,
      name: input.name,
      api_url: input.api_url,
      api_key_enc: secrets.seal(input.api_key),
      tls_fingerprint: pin,
      hostname: null,
      public_ip: null,
      facts: '{}',
      agent_version: reach.agentVersion ?? how.version ?? null,
      connect: reach.connect,
      daemon_token_hash: null,
      last_seen: null,
      latest_sample: null,
      score_base: null,
      created_at: clock(),
    });
  }

  /** A new daemon token for the server; only its hash is kept. The agent gets the raw value. */
  async function newDaemonToken(serverId: number) {
    const token = generateToken('daemon');
    await updateServer(db, serverId, { daemon_token_hash: hashToken(token) });
    agents.dropLink(serverId); // a link opened with the old token ends with it
    return token;
  }

  /** Hands the agent its daemon token through its `/enroll`; a refusal removes the server again (nothing half-stored). */
  async function enrol(row: ServerRow, accountId: number, consoleUrl: string, token: string) {
    try {
      const body = Buffer.from(JSON.stringify({ console_url: consoleUrl, token }));
      const enrolled = await agents.proxy.call(row, 'POST', '/enroll', body);
      if (enrolled.status < 200 || enrolled.status > 299) {
        throw new AppError(502, `the agent did not accept the enrolment: ${explainAgentStatus(enrolled.status)}`);
      }
    } catch (err) {
      await deleteServer(db, accountId, row.id);
      await feed.changed(accountId, 'data');
      throw err;
    }
  }

  return {
    /** The server a daemon token (`dmn_…`) belongs to, as check-ins find it (only its hash is compared), or null. */
    async forDaemonToken(token: string | null): Promise<ServerRow | null> {
      if (!token || !isWellFormedToken('daemon', token)) return null;
      return (await findServerByDaemonToken(db, hashToken(token))) ?? null;
    },

    async add(accountId: number, input: NewServer, consoleUrl: string) {
      const row = await insertChecked(accountId, input);
      await feed.changed(accountId, 'data');
      await enrol(row, accountId, consoleUrl, await newDaemonToken(row.id));
      await ctx.serverChanged(accountId, row.id);
      return ctx.serverView((await findServer(db, accountId, row.id))!, clock());
    },

    /**
     * A server the agent registered itself (docs/agent.md, "One-line install"): the same product,
     * limit and /health checks as `add`, but the agent asked, so its daemon token goes back in the
     * answer instead of to the agent's `/enroll`.
     */
    async register(accountId: number, input: NewServer, how: { connect: RegistrationConnect; version: string }) {
      const row = await insertChecked(accountId, input, how);
      const daemonToken = await newDaemonToken(row.id);
      await feed.changed(accountId, 'data');
      await ctx.serverChanged(accountId, row.id);
      return { server: row, daemonToken, connect: row.connect };
    },

    /** Removes a server registered by `register` whose enrolment token was used up meanwhile. */
    async unregister(accountId: number, id: number) {
      await deleteServer(db, accountId, id);
      await feed.changed(accountId, 'data');
    },

    /**
     * For an agent the console cannot reach: a new daemon token to pass to `palisade-agent enroll` by
     * hand. A daemon token speaks for the agent (check-ins, reported bans, its link), so it needs
     * `control.edit`, as every other change to what the agent does.
     */
    async reissueEnrollment(viewer: Viewer, id: number, consoleUrl: string) {
      const row = await ctx.serverFor(viewer, id, 'control.edit');
      const token = await newDaemonToken(row.id);
      return {
        console_url: consoleUrl,
        token,
        command: `palisade-agent enroll --console ${consoleUrl} --token ${token}`,
      };
    },
  };
}
