import { Empty, QueryView } from '../../../components/states';
import { ApiError } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import { useSecurityEvents } from '../api/get-security-events';

/** Failed signed requests (with their reason) and failed sign-ins on this account. */
export function SecurityEvents() {
  const query = useSecurityEvents();
  if (query.error instanceof ApiError && query.error.status === 404)
    return <p className="note note-muted">The security event stream is not available on this console yet.</p>;
  return (
    <QueryView query={query} what="Loading security events">
      {(events) =>
        events.length === 0 ? (
          <Empty>
            <p>No security events. Failed signed requests and failed sign-ins show up here.</p>
          </Empty>
        ) : (
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
                  <td data-label="Event">{e.kind}</td>
                  <td data-label="Reason">{e.reason ?? e.detail ?? '—'}</td>
                  <td data-label="From">{e.ip ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      }
    </QueryView>
  );
}
