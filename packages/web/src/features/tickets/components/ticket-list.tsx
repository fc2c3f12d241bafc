import { Link } from 'react-router';
import { LoadMore } from '../../../components/pager';
import { Empty, QueryView } from '../../../components/states';
import { ApiError } from '../../../lib/api';
import { timeAgo } from '../../../lib/format';
import { useTickets } from '../api/get-tickets';
import type { TicketScope } from '../api/scope';

export function TicketStatus({ status }: { status: string }) {
  const open = status !== 'closed';
  return <span className={`pill ${open ? 'pill-ok' : 'pill-off'}`}>{open ? 'Open' : 'Closed'}</span>;
}

export function TicketList({ scope }: { scope: TicketScope }) {
  const query = useTickets(scope);
  const base = scope === 'admin' ? '/dashboard/admin/tickets' : '/dashboard/tickets';
  if (query.error instanceof ApiError && query.error.status === 404)
    return <p className="note note-muted">Support tickets are not available on this console yet.</p>;
  return (
    <QueryView query={query} what="Loading tickets">
      {({ items: tickets }) =>
        tickets.length === 0 ? (
          <Empty>
            <p>{scope === 'admin' ? 'No tickets to answer.' : 'No tickets yet.'}</p>
          </Empty>
        ) : (
          <>
            <table className="table cards-on-mobile" aria-label="Tickets">
              <thead>
                <tr>
                  <th scope="col">Ticket</th>
                  <th scope="col">Subject</th>
                  {scope === 'admin' ? <th scope="col">From</th> : null}
                  <th scope="col">State</th>
                  <th scope="col">Updated</th>
                </tr>
              </thead>
              <tbody>
                {tickets.map((t) => (
                  <tr key={t.id}>
                    <td data-label="Ticket">
                      <code>{t.ref}</code>
                    </td>
                    <td data-label="Subject">
                      <Link to={`${base}/${t.id}`}>{t.subject}</Link>
                    </td>
                    {scope === 'admin' ? <td data-label="From">{t.account_email}</td> : null}
                    <td data-label="State">
                      <TicketStatus status={t.status} />
                    </td>
                    <td data-label="Updated">{timeAgo(t.updated_at)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <LoadMore query={query} noun="tickets" />
          </>
        )
      }
    </QueryView>
  );
}
