import { type AlertRuleRequest, alertRuleRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest, numberOf } from '../../../lib/schema';
import { alertRulesKey } from './get-rules';
import type { AlertRule, Metric, RuleKind } from './types';

export interface RuleForm {
  name: string;
  kind: RuleKind;
  metric: Metric;
  threshold: string;
  minutes: string;
  repeat_minutes: string;
  server_ids: number[];
  tags: string[];
  channel_ids: number[];
  enabled: boolean;
}

/** The form filled in from a saved rule, for editing it. */
export function ruleForm(rule: AlertRule): RuleForm {
  return {
    name: rule.name,
    kind: rule.kind,
    metric: rule.metric ?? 'disk',
    threshold: rule.threshold === null ? (rule.kind === 'score' ? '700' : '90') : String(rule.threshold),
    minutes: String(rule.minutes),
    repeat_minutes: String(rule.repeat_minutes),
    server_ids: rule.server_ids ?? [],
    tags: rule.tags ?? [],
    channel_ids: rule.channel_ids,
    enabled: rule.enabled,
  };
}

/** What the form calls each field, for the one line it shows above the buttons. */
const RULE_FIELDS: Record<string, string> = {
  name: 'Name',
  kind: 'Kind',
  metric: 'Metric',
  threshold: 'Threshold',
  minutes: 'Minutes',
  repeat_minutes: 'Repeat',
  server_ids: 'Servers',
  tags: 'Tags',
  channel_ids: 'Channels',
};

/** The body the form sends: only the fields the chosen kind uses. */
export function ruleBody(form: RuleForm): AlertRuleRequest {
  const body: AlertRuleRequest = {
    name: form.name,
    kind: form.kind,
    // A benchmark run is an event: nothing lasts, so nothing repeats.
    repeat_minutes: form.kind === 'benchmark_unverified' ? 0 : Number(form.repeat_minutes || '0'),
    server_ids: form.server_ids.length > 0 ? form.server_ids : null,
    tags: form.tags.length > 0 ? form.tags : null,
    channel_ids: form.channel_ids,
    enabled: form.enabled,
  };
  if (form.kind === 'metric' || form.kind === 'score') body.threshold = numberOf(form.threshold) ?? null;
  if (form.kind === 'metric') body.metric = form.metric;
  if (form.kind === 'metric' || form.kind === 'unreachable') body.minutes = Number(form.minutes || '0');
  return body;
}

/**
 * The console's own check of the rule (packages/protocol/src/requests/alerts.ts): the body to send,
 * or the first field it refuses with the console's message.
 */
export function checkRule(
  form: RuleForm,
): { ok: true; body: AlertRuleRequest } | { ok: false; field: string; error: string } {
  const body = ruleBody(form);
  const checked = checkRequest(alertRuleRequest, body);
  if (checked.ok) return { ok: true, body: { ...body, name: checked.value.name } };
  const [field, message] = Object.entries(checked.errors)[0]!;
  return { ok: false, field, error: `${RULE_FIELDS[field] ?? field}: ${message}` };
}

export const createRule = (body: AlertRuleRequest) =>
  request<{ rule: AlertRule }>('POST', '/api/alerts/rules', { body });

export const useCreateRule = () => useMutation(createRule, () => invalidate(alertRulesKey));
