import { LoadMore } from '../../../components/pager';
import { Empty, QueryView } from '../../../components/states';
import { dateTime } from '../../../lib/format';
import { useAlertHistory } from '../api/get-history';

/** What fired, when, to which channel, and whether it was delivered (from the delivery log). */
export function HistoryPanel() {
  const query = useAlertHistory();
  return (
    <QueryView query={query} what="Loading alert history">
      {({ items: history }) =>
        history.length === 0 ? (
          <Empty>
            <p>No alerts yet.</p>
          </Empty>
        ) : (
          <>
            <table className="table cards-on-mobile" aria-label="Alert history">
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">Alert</th>
                  <th scope="col">Channel</th>
                  <th scope="col">Delivery</th>
                </tr>
              </thead>
              <tbody>
                {history.map((h) => (
                  <tr key={h.id}>
                    <td data-label="When">{dateTime(h.created_at)}</td>
                    <td data-label="Alert">
                      <strong>{h.title}</strong>
                      <p className="muted small">
                        {h.kind.replace('alert.', '')}: {h.body}
                      </p>
                    </td>
                    <td data-label="Channel">{h.channel}</td>
                    <td data-label="Delivery">
                      {h.status === 'delivered'
                        ? `delivered ${dateTime(h.delivered_at)}`
                        : `${h.status}${h.attempts ? ` after ${h.attempts} attempt${h.attempts === 1 ? '' : 's'}` : ''}`}
                      {h.last_error && h.status !== 'delivered' ? <p className="muted small">{h.last_error}</p> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <LoadMore query={query} noun="alerts" />
          </>
        )
      }
    </QueryView>
  );
}
