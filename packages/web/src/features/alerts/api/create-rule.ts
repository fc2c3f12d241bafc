import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
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

const MAX: Record<Metric, number> = { cpu: 100, memory: 100, disk: 100, load: 1000 };

const whole = (label: string, max: number) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${label}: enter a whole number.`)
    .refine((v) => Number(v) <= max, `${label}: at most ${max}.`);

/** The form's checks, the same as the console's (docs/alerts.md, "Rules"); the console has the last word. */
export function checkRule(form: RuleForm): { ok: true; body: Record<string, unknown> } | { ok: false; error: string } {
  if (!form.name.trim()) return { ok: false, error: 'Name: enter a name.' };
  if (form.channel_ids.length === 0) return { ok: false, error: 'Channels: choose at least one channel.' };
  const minutes = whole('Minutes', 1440).safeParse(form.minutes || '0');
  if (!minutes.success) return { ok: false, error: minutes.error.issues[0]!.message };
  const repeat = whole('Repeat', 10_080).safeParse(form.repeat_minutes || '0');
  if (!repeat.success) return { ok: false, error: repeat.error.issues[0]!.message };
  const body: Record<string, unknown> = {
    name: form.name.trim(),
    kind: form.kind,
    // A benchmark run is an event: nothing lasts, so nothing repeats.
    repeat_minutes: form.kind === 'benchmark_unverified' ? 0 : Number(repeat.data),
    server_ids: form.server_ids.length > 0 ? form.server_ids : null,
    tags: form.tags.length > 0 ? form.tags : null,
    channel_ids: form.channel_ids,
    enabled: form.enabled,
  };
  if (form.kind === 'metric' || form.kind === 'score') {
    const max = form.kind === 'metric' ? MAX[form.metric] : 1000;
    const threshold = Number(form.threshold);
    if (form.threshold.trim() === '' || !Number.isFinite(threshold) || threshold < 0 || threshold > max)
      return { ok: false, error: `Threshold: enter 0 to ${max}.` };
    body.threshold = threshold;
  }
  if (form.kind === 'metric') body.metric = form.metric;
  if (form.kind === 'metric' || form.kind === 'unreachable') body.minutes = Number(minutes.data);
  return { ok: true, body };
}

export const createRule = (body: Record<string, unknown>) =>
  request<{ rule: AlertRule }>('POST', '/api/alerts/rules', { body });

export const useCreateRule = () => useMutation(createRule, () => invalidate(alertRulesKey));
