import type { FleetPolicyInput } from '@palisade/protocol';
import type { Database } from '../../db/schema.js';
import { notFound } from '../../errors.js';
import {
  deletePolicy,
  findPolicy,
  insertPolicy,
  listPolicies,
  updatePolicy,
} from '../../repositories/fleet.repository.js';
import { requirePermission } from '../accounts.service.js';
import type { FleetActor, FleetChangeLog } from './actor.js';
import { type Scopes, scopeInput } from './scopes.js';
import { policyView, type Scope, tagsText } from './views.js';

/** A policy's stored columns from a request (its scope already read by scopeInput()). */
const policyColumns = (input: FleetPolicyInput, scope: Scope) => ({
  name: input.name,
  trigger: input.trigger,
  scope_kind: scope.scope,
  scope_tags: tagsText(scope.tags),
  scope_product_id: scope.product_id,
  duration_s: input.duration_s,
  enabled: input.enabled ? 1 : 0,
  allow_private: input.allow_private ? 1 : 0,
});

/** Fleet policies (docs/protection.md, "Fleet policies"): which servers' bans reach which others. */
export function createFleetPolicies(deps: {
  db: Database;
  clock: () => number;
  scopes: Scopes;
  logChange: FleetChangeLog;
  /** Starts a propagation round now (propagation.ts). */
  kick: () => void;
}) {
  const { db, clock, scopes, logChange } = deps;

  async function requirePolicy(accountId: number, id: number) {
    const row = await findPolicy(db, accountId, id);
    if (!row) throw notFound('fleet policy');
    return row;
  }

  return {
    async listPolicies(accountId: number) {
      return (await listPolicies(db, accountId)).map(policyView);
    },

    async createPolicy(actor: FleetActor, input: FleetPolicyInput) {
      requirePermission(actor, 'control.edit');
      const scope = scopeInput(input);
      await scopes.check(actor.accountId, scope);
      const now = clock();
      const id = await insertPolicy(db, {
        account_id: actor.accountId,
        ...policyColumns(input, scope),
        created_at: now,
        updated_at: now,
      });
      await logChange(
        actor,
        'fleet.policy',
        'POST',
        'fleet/policies',
        `added policy ${id}: ${JSON.stringify(input)}`,
        201,
      );
      return policyView(await requirePolicy(actor.accountId, id));
    },

    async updatePolicy(actor: FleetActor, id: number, input: FleetPolicyInput) {
      await requirePolicy(actor.accountId, id);
      requirePermission(actor, 'control.edit');
      const scope = scopeInput(input);
      await scopes.check(actor.accountId, scope);
      await updatePolicy(db, id, { ...policyColumns(input, scope), updated_at: clock() });
      await scopes.rescopePolicy(actor.accountId, id, scope);
      deps.kick();
      await logChange(actor, 'fleet.policy', 'PATCH', `fleet/policies/${id}`, JSON.stringify(input), 200);
      return policyView(await requirePolicy(actor.accountId, id));
    },

    async deletePolicy(actor: FleetActor, id: number) {
      await requirePolicy(actor.accountId, id);
      requirePermission(actor, 'control.edit');
      if (!(await deletePolicy(db, actor.accountId, id))) throw notFound('fleet policy');
      await logChange(actor, 'fleet.policy', 'DELETE', `fleet/policies/${id}`, `removed policy ${id}`, 200);
    },
  };
}
