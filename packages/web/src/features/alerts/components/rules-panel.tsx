import type { AlertRuleRequest } from '@palisade/protocol';
import { useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { Empty, ErrorNote, QueryView, StatusLine } from '../../../components/states';
import { percent, withUnit } from '../../../lib/format';
import { ruleForm, useCreateRule } from '../api/create-rule';
import { useDeleteRule } from '../api/delete-rule';
import { useAlertChannels } from '../api/get-channels';
import { useRuleServers } from '../api/get-rule-servers';
import { useAlertRules } from '../api/get-rules';
import type { AlertRule } from '../api/types';
import { useUpdateRule } from '../api/update-rule';
import { EMPTY_RULE, RuleFormView } from './rule-form';

function describeRule(rule: AlertRule): string {
  switch (rule.kind) {
    case 'offline':
      return 'no check-in for 2 minutes';
    case 'late':
      return 'two check-ins missed';
    case 'unreachable':
      return rule.minutes ? `the agent unreachable for ${rule.minutes} min` : 'the agent unreachable';
    case 'metric':
      return `${rule.metric} above ${rule.metric === 'load' ? withUnit(rule.threshold, '') : percent(rule.threshold)}${rule.minutes ? ` for ${rule.minutes} min` : ''}`;
    case 'score':
      return `score below ${rule.threshold}`;
    case 'attack':
      return 'an attack in progress';
    case 'benchmark_unverified':
      return 'each unverified benchmark run';
    case 'agent_outdated':
      return 'an agent older than the console';
  }
}

/** What fires an alert: rules, fleet-wide or on chosen servers; each can be edited in the same form. */
export function RulesPanel() {
  const query = useAlertRules();
  const channels = useAlertChannels();
  const servers = useRuleServers();
  const create = useCreateRule();
  const update = useUpdateRule();
  const remove = useDeleteRule();
  const [editing, setEditing] = useState<AlertRule | null>(null);
  const [status, setStatus] = useState('');

  const add = async (body: AlertRuleRequest) => {
    const out = await create.run(body);
    if (out) setStatus(`Rule ${out.rule.name} added.`);
    return Boolean(out);
  };
  const save = async (body: AlertRuleRequest) => {
    if (!editing) return false;
    const out = await update.run({ id: editing.id, body });
    if (!out) return false;
    setStatus(`Rule ${out.rule.name} saved.`);
    setEditing(null);
    return true;
  };
  const channelName = (id: number) => channels.data?.channels.find((c) => c.id === id)?.name ?? `#${id}`;
  const serverName = (id: number) => servers.data?.servers.find((s) => s.id === id)?.label ?? `#${id}`;

  return (
    <div className="stack">
      {editing ? (
        <>
          <h3>Edit rule {editing.name}</h3>
          <RuleFormView
            key={`edit-${editing.id}`}
            initial={ruleForm(editing)}
            label={`Edit rule ${editing.name}`}
            submitLabel="Save rule"
            busy={update.pending}
            onSubmit={save}
            onCancel={() => {
              setEditing(null);
              update.reset();
            }}
          />
        </>
      ) : (
        <RuleFormView
          key="add"
          initial={EMPTY_RULE}
          label="Add an alert rule"
          submitLabel="Add rule"
          busy={create.pending}
          onSubmit={add}
        />
      )}
      <ErrorNote message={(editing ? update.error : create.error) ?? remove.error} />
      {status ? <StatusLine>{status}</StatusLine> : null}
      <QueryView query={query} what="Loading rules">
        {(data) =>
          data.rules.length === 0 ? (
            <Empty>
              <p>No rules yet.</p>
            </Empty>
          ) : (
            <table className="table cards-on-mobile" aria-label="Alert rules">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Fires on</th>
                  <th scope="col">Servers</th>
                  <th scope="col">Channels</th>
                  <th scope="col">Repeat</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.rules.map((r) => (
                  <tr key={r.id}>
                    <td data-label="Name">
                      {r.name}
                      {r.enabled ? null : <span className="muted small"> (disabled)</span>}
                    </td>
                    <td data-label="Fires on">{describeRule(r)}</td>
                    <td data-label="Servers">
                      {r.server_ids || r.tags
                        ? [...(r.server_ids ?? []).map(serverName), ...(r.tags ?? []).map((t) => `tag ${t}`)].join(', ')
                        : 'All servers'}
                    </td>
                    <td data-label="Channels">{r.channel_ids.map(channelName).join(', ')}</td>
                    <td data-label="Repeat">{r.repeat_minutes ? `every ${r.repeat_minutes} min` : 'never'}</td>
                    <td data-label="Actions">
                      <div className="inline-form">
                        <Button
                          small
                          onClick={() => {
                            setStatus('');
                            setEditing(r);
                          }}
                        >
                          Edit
                        </Button>
                        <ConfirmButton
                          label="Remove"
                          confirmLabel={`Yes, remove ${r.name}`}
                          busy={remove.pending}
                          small
                          onConfirm={() => void remove.run(r.id)}
                        />
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryView>
    </div>
  );
}
