import { securityEventLabel } from '@palisade/protocol';
import { LoadMore } from '../../../components/pager';
import { Empty, QueryView } from '../../../components/states';
import { ApiError } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import { useSecurityEvents } from '../api/get-security-events';

/** Failed signed requests (with their reason), failed sign-ins and account changes, in words. */
export function SecurityEvents() {
  const query = useSecurityEvents();
  if (query.error instanceof ApiError && query.error.status === 404)
    return <p className="note note-muted">The security event stream is not available on this console yet.</p>;
  return (
    <QueryView query={query} what="Loading security events">
      {({ items: events }) =>
        events.length === 0 ? (
          <Empty>
            <p>
              No security events. Failed sign-ins, refused signed requests and changes to the password or two-factor
              sign-in show up here.
            </p>
          </Empty>
        ) : (
          <>
            <table className="table cards-on-mobile" aria-label="Security events">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Event</th>
                  <th scope="col">Reason</th>
                  <th scope="col">From</th>
                </tr>
              </thead>
              <tbody>
                {events.map((e) => (
                  <tr key={e.id}>
                    <td data-label="When">{dateTime(e.created_at)}</td>
                    <td data-label="Event">{securityEventLabel(e.kind)}</td>
                    <td data-label="Reason">{e.reason}</td>
                    <td data-label="From">{e.ip ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <LoadMore query={query} noun="events" />
          </>
        )
      }
    </QueryView>
  );
}
