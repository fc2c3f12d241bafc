import type { AlertRuleRequest } from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { MultiPick } from '../../../components/multi-pick';
import { ErrorNote } from '../../../components/states';
import { checkRule, type RuleForm } from '../api/create-rule';
import { useAlertChannels } from '../api/get-channels';
import { useRuleServers } from '../api/get-rule-servers';
import type { Metric, RuleKind } from '../api/types';

export const RULE_KIND_LABELS: Record<RuleKind, string> = {
  offline: 'Server offline / back online',
  late: 'Server late (two check-ins missed) / checks in again',
  unreachable: 'Unreachable for N minutes',
  metric: 'CPU, memory, disk or load above a threshold',
  score: 'Score below a value',
  attack: 'Attack started / ended',
  benchmark_unverified: 'Unverified benchmark run',
  agent_outdated: 'Agent older than the console',
};

export const EMPTY_RULE: RuleForm = {
  name: '',
  kind: 'offline',
  metric: 'disk',
  threshold: '90',
  minutes: '5',
  repeat_minutes: '0',
  server_ids: [],
  tags: [],
  channel_ids: [],
  enabled: true,
};

const toggle = <T,>(list: T[], item: T) => (list.includes(item) ? list.filter((x) => x !== item) : [...list, item]);

/**
 * The rule form, for adding a rule and for editing one (filled in from it): only the fields the
 * chosen kind uses are shown; the form's own checks name the field, the console's 400s too.
 */
export function RuleFormView({
  initial,
  label,
  submitLabel,
  busy,
  onSubmit,
  onCancel,
}: {
  initial: RuleForm;
  /** The form's accessible name. */
  label: string;
  submitLabel: string;
  busy: boolean;
  /** Sends the checked body; answers whether it was saved (the form then starts again from `initial`). */
  onSubmit: (body: AlertRuleRequest) => Promise<boolean>;
  onCancel?: () => void;
}) {
  const channels = useAlertChannels();
  const servers = useRuleServers();
  const [form, setForm] = useState<RuleForm>(initial);
  const fleetTags = [...new Set([...(servers.data?.servers ?? []).flatMap((s) => s.tags), ...form.tags])].sort();
  const [formError, setFormError] = useState<string | null>(null);
  const set = (fields: Partial<RuleForm>) => setForm((f) => ({ ...f, ...fields }));
  const { kind } = form;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const checked = checkRule(form);
    if (!checked.ok) return setFormError(checked.error);
    setFormError(null);
    if (await onSubmit(checked.body)) setForm(initial);
  };

  return (
    <form className="stack" onSubmit={(e) => void submit(e)} noValidate aria-label={label}>
      <div className="inline-form">
        <TextField
          label="Rule name"
          value={form.name}
          onChange={(e) => set({ name: e.target.value })}
          placeholder="Disk full"
        />
        <SelectField label="When" value={kind} onChange={(e) => set({ kind: e.target.value as RuleKind })}>
          {(Object.keys(RULE_KIND_LABELS) as RuleKind[]).map((k) => (
            <option key={k} value={k}>
              {RULE_KIND_LABELS[k]}
            </option>
          ))}
        </SelectField>
        {kind === 'metric' ? (
          <SelectField label="Metric" value={form.metric} onChange={(e) => set({ metric: e.target.value as Metric })}>
            <option value="cpu">CPU %</option>
            <option value="memory">Memory %</option>
            <option value="disk">Disk %</option>
            <option value="load">Load (1 min)</option>
          </SelectField>
        ) : null}
        {kind === 'metric' || kind === 'score' ? (
          <TextField
            label={kind === 'score' ? 'Threshold (score, 1–1000)' : 'Threshold'}
            inputMode="decimal"
            value={form.threshold}
            onChange={(e) => set({ threshold: e.target.value })}
          />
        ) : null}
        {kind === 'metric' || kind === 'unreachable' ? (
          <TextField
            label={kind === 'unreachable' ? 'Unreachable for (minutes)' : 'For minutes'}
            inputMode="numeric"
            value={form.minutes}
            onChange={(e) => set({ minutes: e.target.value })}
          />
        ) : null}
        {kind === 'benchmark_unverified' ? null : (
          <TextField
            label="Repeat every (minutes, 0 = never)"
            inputMode="numeric"
            value={form.repeat_minutes}
            onChange={(e) => set({ repeat_minutes: e.target.value })}
          />
        )}
      </div>
      {kind === 'benchmark_unverified' ? (
        <p className="muted small">One notification for each run whose figures fail a consistency check.</p>
      ) : null}
      <fieldset className="chips">
        <legend>Send to</legend>
        {(channels.data?.channels ?? []).length === 0 ? (
          <p className="muted small">Add a channel above first.</p>
        ) : (
          channels.data!.channels.map((c) => (
            <label key={c.id}>
              <input
                type="checkbox"
                checked={form.channel_ids.includes(c.id)}
                onChange={() => set({ channel_ids: toggle(form.channel_ids, c.id) })}
              />{' '}
              {c.name} ({c.kind})
            </label>
          ))
        )}
      </fieldset>
      <MultiPick
        legend="Servers (no server and no tag chosen: the whole fleet)"
        noun="servers"
        options={(servers.data?.servers ?? []).map((s) => ({ value: s.id, label: s.label }))}
        selected={form.server_ids}
        onToggle={(id) => set({ server_ids: toggle(form.server_ids, id) })}
      />
      {fleetTags.length > 0 ? (
        <MultiPick
          legend="Tags (and every server carrying one of them, now or later)"
          noun="tags"
          options={fleetTags.map((t) => ({ value: t, label: t }))}
          selected={form.tags}
          onToggle={(t) => set({ tags: toggle(form.tags, t) })}
        />
      ) : null}
      <p>
        <label>
          <input type="checkbox" checked={form.enabled} onChange={(e) => set({ enabled: e.target.checked })} /> Enabled
        </label>{' '}
        <span className="muted small">A disabled rule sends nothing, and starts afresh when enabled again.</span>
      </p>
      <ErrorNote message={formError} />
      <div className="inline-form">
        <Button type="submit" variant="primary" busy={busy}>
          {submitLabel}
        </Button>
        {onCancel ? <Button onClick={onCancel}>Cancel</Button> : null}
      </div>
    </form>
  );
}
