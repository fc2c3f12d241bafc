import { type FormEvent, useEffect, useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { SecretOnce } from '../../../components/credentials';
import { TextField } from '../../../components/field';
import { Empty, ErrorNote, QueryView, StatusLine } from '../../../components/states';
import { ApiError } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import { useDeleteWebhook } from '../api/delete-webhook';
import { useWebhook } from '../api/get-webhook';
import { checkSetWebhook, useSetWebhook } from '../api/set-webhook';

/** The ticket-notification webhook: URL, its signing secret (shown when set) and the delivery log. */
export function WebhookPanel() {
  const query = useWebhook();
  const save = useSetWebhook();
  const remove = useDeleteWebhook();
  const [url, setUrl] = useState('');
  const [urlError, setUrlError] = useState<string | undefined>();
  const [secret, setSecret] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const current = query.data?.url ?? '';
  useEffect(() => setUrl(current), [current]);

  if (query.error instanceof ApiError && query.error.status === 404 && query.data === undefined)
    return <p className="note note-muted">Notification webhooks are not available on this console yet.</p>;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const checked = checkSetWebhook({ url });
    if (!checked.ok) return setUrlError(checked.errors.url);
    setUrlError(undefined);
    const out = await save.run(checked.value.url);
    if (out) {
      setSecret(out.secret ?? null);
      setStatus('Webhook saved.');
    }
  };

  return (
    <div className="stack">
      <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label="Notification webhook">
        <TextField
          label="Webhook URL"
          type="url"
          placeholder="https://example.com/palisade"
          hint="Ticket activity is POSTed here, signed with X-Palisade-Signature."
          value={url}
          error={urlError}
          onChange={(e) => setUrl(e.target.value)}
        />
        <Button type="submit" variant="primary" busy={save.pending}>
          Save
        </Button>
        {current ? (
          <ConfirmButton
            label="Remove"
            confirmLabel="Yes, remove the webhook"
            busy={remove.pending}
            onConfirm={() =>
              void remove.run(undefined).then((out) => out !== undefined && setStatus('Webhook removed.'))
            }
          />
        ) : null}
      </form>
      <ErrorNote message={save.error ?? remove.error} />
      {status ? <StatusLine>{status}</StatusLine> : null}
      {secret ? <SecretOnce value={secret} what="signing secret" onDone={() => setSecret(null)} /> : null}
      {query.data?.secret && !secret ? (
        <p className="muted small">A signing secret is set. Saving the URL again shows a new one.</p>
      ) : null}
      <h3>Deliveries</h3>
      <QueryView query={query} what="Loading deliveries">
        {(data) =>
          !data.deliveries || data.deliveries.length === 0 ? (
            <Empty>
              <p>No deliveries yet.</p>
            </Empty>
          ) : (
            <table className="table cards-on-mobile" aria-label="Webhook deliveries">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Result</th>
                  <th scope="col">Attempts</th>
                </tr>
              </thead>
              <tbody>
                {data.deliveries.map((d) => (
                  <tr key={d.id}>
                    <td data-label="When">{dateTime(d.created_at)}</td>
                    <td data-label="Event">
                      {d.kind ?? '—'} {d.ticket_ref ? <code>{d.ticket_ref}</code> : null}
                    </td>
                    <td data-label="Result">
                      {d.status ?? '—'}
                      {d.response_status ? ` (HTTP ${d.response_status})` : ''}
                      {d.error ? ` ${d.error}` : ''}
                    </td>
                    <td data-label="Attempts">{d.attempts ?? '—'}</td>
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
