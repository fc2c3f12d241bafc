import type { WebhookDelivery } from '@palisade/protocol';
import { type FormEvent, useEffect, useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { SecretOnce } from '../../../components/credentials';
import { TextField } from '../../../components/field';
import { Empty, ErrorNote, QueryView, StatusLine } from '../../../components/states';
import { ApiError } from '../../../lib/api';
import { dateTime, withUnit } from '../../../lib/format';
import { useDeleteWebhook } from '../api/delete-webhook';
import { deliveriesByEvent, useWebhook } from '../api/get-webhook';
import { checkSetWebhook, useSetWebhook } from '../api/set-webhook';

const STATUS_WORDS: Record<WebhookDelivery['status'], string> = {
  delivered: 'Delivered',
  queued: 'Not yet delivered; will be tried again',
  failed: 'Given up after the last attempt',
};

const EVENT_WORDS: Record<string, string> = {
  'ticket.created': 'Ticket opened',
  'ticket.reply': 'Ticket reply',
  'ticket.closed': 'Ticket closed',
  'ticket.reopened': 'Ticket reopened',
  'alert.fired': 'Alert fired',
  'alert.repeat': 'Alert still firing',
  'alert.resolved': 'Alert ended',
  'alert.test': 'Test alert',
};
/** An event in words; one this list does not know yet, as a phrase made of its name (`agent_update.failed`: "Agent update failed"). */
const eventWords = (kind: string) => {
  if (Object.hasOwn(EVENT_WORDS, kind)) return EVENT_WORDS[kind]!;
  const phrase = kind.replace(/[._]+/g, ' ').trim();
  return phrase.charAt(0).toUpperCase() + phrase.slice(1);
};

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
      setSecret(out.secret);
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
      {query.data?.url && !secret ? (
        <p className="muted small">A signing secret is set. Saving the URL again shows it.</p>
      ) : null}
      <h3>Deliveries</h3>
      <QueryView query={query} what="Loading deliveries">
        {(data) =>
          data.deliveries.length === 0 ? (
            <Empty>
              <p>No deliveries yet.</p>
            </Empty>
          ) : (
            <table className="table cards-on-mobile" aria-label="Webhook deliveries">
              <thead>
                <tr>
                  <th scope="col">Event</th>
                  <th scope="col">First tried</th>
                  <th scope="col">Result</th>
                  <th scope="col">Attempts</th>
                </tr>
              </thead>
              <tbody>
                {deliveriesByEvent(data.deliveries).map((event) => (
                  <tr key={event.id}>
                    <td data-label="Event">{eventWords(event.kind)}</td>
                    <td data-label="First tried">{dateTime(event.attempts.at(-1)!.created_at)}</td>
                    <td data-label="Result">{STATUS_WORDS[event.status]}</td>
                    <td data-label="Attempts">
                      <details>
                        <summary>
                          {event.attempts.length} {event.attempts.length === 1 ? 'attempt' : 'attempts'}
                        </summary>
                        <ol className="attempts" aria-label={`Attempts for ${eventWords(event.kind)}`}>
                          {[...event.attempts].reverse().map((a) => (
                            <li key={a.id}>
                              {dateTime(a.created_at)}:{' '}
                              {a.response_status ? `HTTP ${a.response_status}` : (a.error ?? 'no answer')} in{' '}
                              {withUnit(a.duration_ms, 'ms')}
                            </li>
                          ))}
                        </ol>
                      </details>
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
