import type { FleetScope } from '@palisade/protocol';
import type { Database } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import {
  applicationsOf,
  entriesOfPolicy,
  scopeServers,
  serverApplications,
  setPolicyEntriesScope,
  wantAbsentOn,
  wantPresentOn,
} from '../../repositories/fleet.repository.js';
import { findProduct } from '../../repositories/products.repository.js';
import { serverTags } from '../servers/index.js';
import { type EntryRow, inScope, type Scope, scopeOf, tagsText } from './views.js';

/** A scope as a request gives it: tags only for `tags`, a product only for `product`. */
export const scopeInput = (input: { scope: FleetScope; tags?: string[]; product_id?: number }): Scope => ({
  scope: input.scope,
  tags: input.scope === 'tags' ? (input.tags ?? []) : [],
  product_id: input.scope === 'product' ? (input.product_id ?? null) : null,
});

/**
 * Which of an account's servers a scope selects, and keeping what the servers are asked to hold in
 * step with the scopes of the entries in force (a server added or retagged, a policy rescoped).
 */
export function createScopes({ db, clock }: { db: Database; clock: () => number }) {
  /**
   * Makes each server hold the entries in force whose scope includes it (but the one that banned the
   * address first), and asks a server that left an entry's scope to drop what it got from it: the
   * propagator keeps an address the server held of its own. `onlyServer` limits the work to one
   * server (it was added, or its tags changed); without it, every server of the account.
   */
  async function reconcile(accountId: number, entries: EntryRow[], onlyServer?: number) {
    if (entries.length === 0) return;
    const only = (id: number) => onlyServer === undefined || id === onlyServer;
    const all = (await scopeServers(db, accountId)).filter((s) => only(Number(s.id)));
    const apps =
      onlyServer === undefined
        ? await applicationsOf(
            db,
            entries.map((e) => Number(e.id)),
          )
        : await serverApplications(db, onlyServer);
    const present = new Set(
      apps.filter((a) => a.want === 'present').map((a) => `${Number(a.entry_id)}:${Number(a.server_id)}`),
    );
    const add: { entryId: number; serverId: number }[] = [];
    const drop = new Map<number, number[]>();
    for (const entry of entries) {
      const entryId = Number(entry.id);
      const scope = scopeOf(entry);
      for (const s of all) {
        const serverId = Number(s.id);
        const wanted = inScope(scope, s) && serverId !== Number(entry.origin_server_id);
        const held = present.has(`${entryId}:${serverId}`);
        if (wanted && !held) add.push({ entryId, serverId });
        if (!wanted && held) drop.set(serverId, [...(drop.get(serverId) ?? []), entryId]);
      }
    }
    const now = clock();
    await wantPresentOn(db, accountId, add, now);
    for (const [serverId, entryIds] of drop) await wantAbsentOn(db, serverId, entryIds, now);
  }

  return {
    reconcile,

    /** The account's servers a scope selects. */
    async targets(accountId: number, scope: Scope) {
      return (await scopeServers(db, accountId))
        .filter((s) => inScope(scope, s))
        .map((s) => ({ id: Number(s.id), name: s.name }));
    },

    /** A product or tag the account does not have is 404, like another account's. */
    async check(accountId: number, scope: Scope) {
      if (scope.scope === 'product' && !(await findProduct(db, accountId, scope.product_id!)))
        throw notFound('product');
      if (scope.scope === 'tags') {
        const known = new Set((await scopeServers(db, accountId)).flatMap((s) => serverTags(s.tags)));
        const missing = scope.tags.find((t) => !known.has(t));
        if (missing) throw notFound(`tag "${missing}"`);
      }
    },

    /** A policy's new scope: its entries in force take it, and the servers follow. */
    async rescopePolicy(accountId: number, policyId: number, scope: Scope) {
      await setPolicyEntriesScope(db, policyId, {
        scope_kind: scope.scope,
        scope_tags: tagsText(scope.tags),
        scope_product_id: scope.product_id,
      });
      await reconcile(accountId, await entriesOfPolicy(db, policyId));
    },
  };
}

export type Scopes = ReturnType<typeof createScopes>;
