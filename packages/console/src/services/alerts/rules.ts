import { type AlertRuleChecked, EVENT_RULE_KINDS } from '@palisade/protocol';
import type { AlertMetric, Database } from '../../db/schema.js';
import { badRequest, notFound } from '../../errors.js';
import {
  accountServerIds,
  accountServerTagRows,
  deleteRule,
  findRule,
  insertRule,
  listChannels,
  listRules,
  updateRule,
} from '../../repositories/alerts.repository.js';
import { serverTags } from '../servers/views.js';
import { ruleCovers, ruleServerIds, ruleTags, ruleView } from './views.js';

/** A rule checked by `alertRuleRequest` (packages/protocol/src/requests/alerts.ts), with what its kind has no use for as null. */
export type RuleInput = Omit<AlertRuleChecked, 'metric' | 'threshold'> & {
  metric: AlertMetric | null;
  threshold: number | null;
};

/** A rule's stored columns: only the fields its kind reads are kept. */
const ruleRow = (input: RuleInput) => ({
  name: input.name,
  kind: input.kind,
  metric: input.kind === 'metric' ? input.metric : null,
  threshold: input.kind === 'metric' || input.kind === 'score' ? input.threshold : null,
  minutes: input.kind === 'metric' || input.kind === 'unreachable' ? input.minutes : 0,
  // An event rule sends once per event: nothing lasts, so nothing repeats.
  repeat_minutes: EVENT_RULE_KINDS.includes(input.kind) ? 0 : input.repeat_minutes,
  server_ids: input.server_ids === null ? null : JSON.stringify([...new Set(input.server_ids)]),
  tags: input.tags === null || input.tags.length === 0 ? null : JSON.stringify(input.tags),
  channel_ids: JSON.stringify([...new Set(input.channel_ids)]),
  enabled: input.enabled ? 1 : 0,
});

/** Alert rules (docs/alerts.md, "Rules", "Scope"): what fires, on which servers, told to which channels. */
export function createAlertRules({ db, clock }: { db: Database; clock: () => number }) {
  async function checkRuleTargets(accountId: number, input: RuleInput) {
    const channels = new Set((await listChannels(db, accountId)).map((c) => Number(c.id)));
    const unknownChannel = input.channel_ids.find((id) => !channels.has(id));
    if (unknownChannel !== undefined) throw badRequest(`channel_ids: no channel ${unknownChannel} in this account`);
    if (input.server_ids !== null) {
      const servers = await accountServerIds(db, accountId);
      const unknownServer = input.server_ids.find((id) => !servers.has(id));
      if (unknownServer !== undefined) throw badRequest(`server_ids: no server ${unknownServer} in this account`);
    }
  }

  /** The account's servers a rule with this scope covers; null when it covers all of them. */
  async function coveredServers(accountId: number, scope: Pick<ReturnType<typeof ruleRow>, 'server_ids' | 'tags'>) {
    if (scope.server_ids === null && scope.tags === null) return null;
    const servers = (await accountServerTagRows(db, accountId)).map((r) => ({
      id: Number(r.id),
      tags: serverTags(r.tags),
    }));
    return servers.filter((s) => ruleCovers(scope, s)).map((s) => s.id);
  }

  return {
    async listRules(accountId: number) {
      return (await listRules(db, accountId)).map(ruleView);
    },

    async createRule(accountId: number, input: RuleInput) {
      await checkRuleTargets(accountId, input);
      const now = clock();
      const id = await insertRule(db, { account_id: accountId, created_at: now, active_since: now, ...ruleRow(input) });
      return ruleView((await findRule(db, accountId, id))!);
    },

    /**
     * Replaces a rule. Disabling it, or changing what it fires on, forgets its states (so nothing
     * "resolved" is sent, and turning it on again starts fresh); servers taken out of its scope are
     * forgotten likewise (docs/alerts.md, "Timing").
     */
    async updateRule(accountId: number, id: number, input: RuleInput) {
      const before = await findRule(db, accountId, id);
      if (!before) throw notFound('rule');
      await checkRuleTargets(accountId, input);
      const row = ruleRow(input);
      // A new kind or metric is another alert: its states are forgotten. A new threshold or minutes is
      // the same alert at another level: the next round judges a firing one by it, and sends "resolved"
      // when it no longer holds, so those who were told it started are told it ended.
      const condition = (r: Pick<typeof row, 'kind' | 'metric'>) => JSON.stringify([r.kind, r.metric]);
      const restart = !input.enabled || Number(before.enabled) !== 1 || condition(before) !== condition(row);
      // The servers it covers after the change (null: all), so those it no longer covers are forgotten.
      const scope = await coveredServers(accountId, row);
      const scopeChanged =
        JSON.stringify([ruleServerIds(row), ruleTags(row)]) !==
        JSON.stringify([ruleServerIds(before), ruleTags(before)]);
      await updateRule(
        db,
        accountId,
        id,
        { ...row, ...(restart || scopeChanged ? { active_since: clock() } : {}) },
        restart ? [] : scope,
      );
      return ruleView((await findRule(db, accountId, id))!);
    },

    async removeRule(accountId: number, id: number) {
      if (!(await deleteRule(db, accountId, id))) throw notFound('rule');
    },
  };
}
