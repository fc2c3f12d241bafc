import type { TicketMessage } from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextArea } from '../../../components/field';
import { ErrorNote, QueryView, StatusLine } from '../../../components/states';
import { dateTime } from '../../../lib/format';
import { useSetTicketOpen } from '../api/close-ticket';
import { useTicket } from '../api/get-ticket';
import { checkReply, useReplyTicket } from '../api/reply-ticket';
import type { TicketScope } from '../api/scope';
import { TicketStatus } from './ticket-list';

const isStaff = (m: TicketMessage) => m.author_role === 'admin';

/** Who wrote it: the person's name (a team's name for a message from before authors were kept), support marked. */
const authorText = (m: TicketMessage) =>
  isStaff(m) ? (m.author_person_id === null ? 'Support' : `${m.author_name} (support)`) : m.author_name;

export function TicketThread({ scope, id }: { scope: TicketScope; id: number }) {
  const query = useTicket(scope, id);
  const reply = useReplyTicket();
  const state = useSetTicketOpen();
  const [message, setMessage] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [status, setStatus] = useState('');

  const send = async (event: FormEvent) => {
    event.preventDefault();
    const checked = checkReply({ message });
    if (!checked.ok) return setError(checked.errors.message);
    setError(undefined);
    const out = await reply.run({ scope, id, message: checked.value.message });
    if (out !== undefined) {
      setMessage('');
      setStatus('Reply sent.');
    }
  };

  return (
    <QueryView query={query} what="Loading the ticket">
      {(t) => {
        const open = t.status !== 'closed';
        return (
          <div className="stack">
            <div className="server-head">
              <h1 tabIndex={-1}>{t.subject}</h1>
              <div className="server-meta">
                <code>{t.ref}</code>
                <TicketStatus status={t.status} />
                <span className="muted">opened {dateTime(t.created_at)}</span>
              </div>
            </div>
            <ol className="thread" aria-label="Messages">
              {t.messages.map((m) => (
                <li key={m.id} className={isStaff(m) ? 'from-staff' : 'from-user'}>
                  <div className="thread-meta">
                    <strong>{authorText(m)}</strong> <span className="muted small">{dateTime(m.created_at)}</span>
                  </div>
                  <p className="thread-body">{m.body}</p>
                </li>
              ))}
            </ol>
            {open ? (
              <form className="card form" onSubmit={(e) => void send(e)} noValidate aria-label="Reply">
                <TextArea
                  label={scope === 'admin' ? 'Answer' : 'Reply'}
                  rows={4}
                  value={message}
                  error={error}
                  onChange={(e) => setMessage(e.target.value)}
                />
                <Button type="submit" variant="primary" busy={reply.pending}>
                  Send
                </Button>
              </form>
            ) : (
              <p className="note note-muted">This ticket is closed. Reopen it to reply.</p>
            )}
            <div className="actions">
              <Button
                busy={state.pending}
                onClick={() =>
                  void state
                    .run({ scope, id, open: !open })
                    .then((out) => out !== undefined && setStatus(open ? 'Ticket closed.' : 'Ticket reopened.'))
                }
              >
                {open ? 'Close ticket' : 'Reopen ticket'}
              </Button>
            </div>
            <ErrorNote message={reply.error ?? state.error} />
            {status ? <StatusLine>{status}</StatusLine> : null}
          </div>
        );
      }}
    </QueryView>
  );
}
