import { type FormEvent, useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { Empty, ErrorNote, QueryView, StatusLine } from '../../../components/states';
import { dateTime, withUnit } from '../../../lib/format';
import { checkChannel, useCreateChannel } from '../api/create-channel';
import { useDeleteChannel } from '../api/delete-channel';
import { useAlertChannels } from '../api/get-channels';
import { useResendConfirmation } from '../api/resend-confirmation';
import { useTestChannel } from '../api/test-channel';
import type { ChannelKind, ChannelTestResult } from '../api/types';

const KIND_LABELS: Record<ChannelKind, string> = {
  webhook: 'Signed webhook (the account webhook below)',
  slack: 'Slack incoming webhook',
  discord: 'Discord webhook',
  email: 'E-mail',
};

function TestOutcome({ result }: { result: ChannelTestResult }) {
  return result.delivered ? (
    <p className="note note-ok" role="status">
      Test delivered{result.status_code ? ` (HTTP ${result.status_code})` : ''} in {withUnit(result.duration_ms, 'ms')}.
    </p>
  ) : (
    <p className="note note-bad" role="status">
      Test failed: {result.error}
    </p>
  );
}

/** Where alerts go: channels with "send a test" and their last failure. */
export function ChannelsPanel() {
  const query = useAlertChannels();
  const create = useCreateChannel();
  const remove = useDeleteChannel();
  const test = useTestChannel();
  const resend = useResendConfirmation();
  const [name, setName] = useState('');
  const [kind, setKind] = useState<ChannelKind>('slack');
  const [target, setTarget] = useState('');
  const [formError, setFormError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [results, setResults] = useState<Record<number, ChannelTestResult>>({});

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const checked = checkChannel({ name, kind, target });
    if (!checked.ok) return setFormError(checked.error);
    setFormError(null);
    const out = await create.run(checked.body);
    if (out) {
      setName('');
      setTarget('');
      setStatus(
        out.channel.confirmed
          ? `Channel ${out.channel.name} added.`
          : `Channel ${out.channel.name} added. A confirmation e-mail went to ${out.channel.target}: alerts go there once the link in it is opened.`,
      );
    }
  };
  const runResend = async (id: number, target: string) => {
    const out = await resend.run(id);
    if (out) setStatus(`A new confirmation e-mail went to ${target}; the earlier link no longer works.`);
  };
  const runTest = async (id: number) => {
    const out = await test.run(id);
    if (out) setResults((r) => ({ ...r, [id]: out }));
  };

  return (
    <div className="stack">
      <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label="Add an alert channel">
        <TextField label="Channel name" value={name} onChange={(e) => setName(e.target.value)} placeholder="ops" />
        <SelectField label="Kind" value={kind} onChange={(e) => setKind(e.target.value as ChannelKind)}>
          {(Object.keys(KIND_LABELS) as ChannelKind[]).map((k) => (
            <option key={k} value={k}>
              {KIND_LABELS[k]}
            </option>
          ))}
        </SelectField>
        {kind === 'slack' || kind === 'discord' ? (
          <TextField
            label="Webhook URL"
            type="url"
            value={target}
            onChange={(e) => setTarget(e.target.value)}
            placeholder="https://hooks.slack.com/services/…"
          />
        ) : null}
        {kind === 'email' ? (
          <TextField
            label="E-mail address"
            type="email"
            value={target}
            onChange={(e) => setTarget(e.target.value)}
            placeholder="oncall@example.com"
          />
        ) : null}
        <Button type="submit" variant="primary" busy={create.pending}>
          Add channel
        </Button>
      </form>
      <ErrorNote message={formError ?? create.error ?? remove.error ?? test.error ?? resend.error} />
      {status ? <StatusLine>{status}</StatusLine> : null}
      <QueryView query={query} what="Loading channels">
        {(data) =>
          data.channels.length === 0 ? (
            <Empty>
              <p>No channels yet. Add one, then send it a test.</p>
            </Empty>
          ) : (
            <table className="table cards-on-mobile" aria-label="Alert channels">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Target</th>
                  <th scope="col">State</th>
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {data.channels.map((c) => (
                  <tr key={c.id}>
                    <td data-label="Name">{c.name}</td>
                    <td data-label="Kind">{c.kind}</td>
                    <td data-label="Target">
                      <code>{c.target}</code>
                    </td>
                    <td data-label="State">
                      {!c.confirmed ? (
                        <p className="note note-warn">
                          <strong>Waiting for confirmation</strong>
                          {c.confirmation_sent_at ? ` (e-mail sent ${dateTime(c.confirmation_sent_at)})` : ''}: nothing
                          is sent here until the recipient opens the link in it.
                        </p>
                      ) : c.failing ? (
                        <strong className="note note-bad">Failing: {c.failures} failures in a row</strong>
                      ) : c.last_success_at ? (
                        `Last delivered ${dateTime(c.last_success_at)}`
                      ) : (
                        'Not used yet'
                      )}
                      {c.last_error ? <p className="muted small">{c.last_error}</p> : null}
                      {results[c.id] ? <TestOutcome result={results[c.id]!} /> : null}
                    </td>
                    <td data-label="Actions">
                      {c.confirmed ? (
                        <Button small busy={test.pending} onClick={() => void runTest(c.id)}>
                          Send a test
                        </Button>
                      ) : (
                        <Button small busy={resend.pending} onClick={() => void runResend(c.id, c.target)}>
                          Resend confirmation
                        </Button>
                      )}{' '}
                      <ConfirmButton
                        label="Remove"
                        confirmLabel={`Yes, remove ${c.name}`}
                        busy={remove.pending}
                        onConfirm={() => void remove.run(c.id)}
                      />
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
