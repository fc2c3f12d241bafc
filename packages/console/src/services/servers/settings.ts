import { badRequest, notFound } from '../../errors.js';
import { deleteServer, findServer, updateServer } from '../../repositories/servers.repository.js';
import { type AgentTarget, isHttps, pinFor } from './agent-client.js';
import { agentRefused, type ServersContext, type Viewer } from './context.js';
import type { NewServer } from './enrolment.js';

export type ServerChanges = Partial<
  Pick<NewServer, 'name' | 'api_url' | 'api_key' | 'tls_fingerprint'> & { tags: string[] }
>;

/** What an account changes on a saved server: its name, tags, address, key and pin, how it is reached, its removal. */
export function createServerSettings(ctx: ServersContext) {
  const { db, clock, secrets, agents, changes: feed } = ctx;

  /** Refuses a target that does not answer /health as an agent with this key, saying why. */
  async function requireHealthy(target: AgentTarget) {
    const check = await agents.check(target);
    if ('error' in check) throw agentRefused(check);
  }

  return {
    /**
     * Name, tags, address, key and pin. A new address needs the key again; a new pin alone is checked with
     * the stored key, which goes out only after the agent's certificate matched the new pin.
     */
    async update(accountId: number, id: number, changes: ServerChanges) {
      const row = await agents.requireServer(accountId, id);
      // The stored key belongs to the stored address: a new address could be anyone's, so it must come
      // with the key again, and only that key is sent to it.
      if (changes.api_url !== undefined && changes.api_url !== row.api_url && changes.api_key === undefined) {
        throw badRequest(
          'api_key: send the agent key again when you change api_url; the stored key stays with the old address',
        );
      }
      const apiUrl = changes.api_url ?? row.api_url;
      // The stored pin follows the agent to a new https address; an http address has none to keep.
      const pin =
        changes.tls_fingerprint !== undefined
          ? pinFor(apiUrl, changes.tls_fingerprint)
          : isHttps(apiUrl)
            ? row.tls_fingerprint
            : null;
      // The stored key is opened only when the agent must be checked: a rename or new tags need no key.
      // A new key for the same agent (same address, same pin) is checked down its outbound link when
      // one is up, as every call is; a new address or pin is checked at the address, where it applies.
      if (changes.api_url !== undefined || changes.api_key !== undefined || changes.tls_fingerprint !== undefined)
        await requireHealthy({
          apiUrl,
          apiKey: changes.api_key ?? secrets.open(row.api_key_enc),
          tlsFingerprint: pin,
          ...(apiUrl === row.api_url && changes.tls_fingerprint === undefined
            ? { serverId: row.id, connect: row.connect }
            : {}),
        });
      await updateServer(db, id, {
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.tags !== undefined ? { tags: JSON.stringify(changes.tags) } : {}),
        ...(changes.api_url !== undefined ? { api_url: changes.api_url } : {}),
        ...(changes.api_key !== undefined ? { api_key_enc: secrets.seal(changes.api_key) } : {}),
        ...(pin !== row.tls_fingerprint ? { tls_fingerprint: pin } : {}),
      });
      await feed.changed(accountId, 'data');
      if (changes.tags !== undefined) await ctx.serverChanged(accountId, id);
      return ctx.serverView((await findServer(db, accountId, id))!, clock());
    },

    /**
     * Switches how the console reaches the server (`direct` at its address, `outbound` only through
     * the link its agent opens): the account's own decision, with `control.edit` (the route audits
     * it). A link held for a server switched to `direct` is closed. Answers the mode before and the view.
     */
    async setConnection(viewer: Viewer, id: number, mode: 'direct' | 'outbound') {
      const row = await ctx.serverFor(viewer, id, 'control.edit');
      const before = row.connect;
      if (before !== mode) {
        await updateServer(db, row.id, { connect: mode });
        if (mode === 'direct') agents.dropLink(row.id);
        await feed.changed(viewer.id, 'data');
      }
      return { before, name: row.name, server: await ctx.serverView((await findServer(db, viewer.id, id))!, clock()) };
    },

    async remove(accountId: number, id: number) {
      if (!(await deleteServer(db, accountId, id))) throw notFound('server');
      await feed.changed(accountId, 'data');
      agents.dropLink(id);
    },
  };
}
