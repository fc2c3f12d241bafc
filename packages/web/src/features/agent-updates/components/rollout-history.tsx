import type { Rollout } from '@palisade/protocol';
import { Link } from 'react-router';
import { Empty } from '../../../components/states';
import { dateTime } from '../../../lib/format';
import { RolloutStatePill } from './labels';

const total = (r: Rollout) => Object.values(r.counts).reduce((a, b) => a + (b ?? 0), 0);

/** Past rollouts, newest first: what they updated to, where, how it ended and why. */
export function RolloutHistory({ rollouts }: { rollouts: Rollout[] }) {
  if (rollouts.length === 0)
    return (
      <Empty>
        <p>No rollout has ended yet.</p>
      </Empty>
    );
  return (
    <div className="table-scroll">
      <table className="table cards-on-mobile rollout-history" aria-label="Past rollouts">
        <thead>
          <tr>
            <th scope="col">Rollout</th>
            <th scope="col">Version</th>
            <th scope="col">Servers</th>
            <th scope="col">Outcome</th>
            <th scope="col">Updated</th>
            <th scope="col">Started</th>
            <th scope="col">Ended</th>
          </tr>
        </thead>
        <tbody>
          {rollouts.map((r) => (
            <tr key={r.id}>
              <td data-label="Rollout">
                <Link to={`/dashboard/agent-updates/${r.id}`}>Rollout {r.id}</Link>
              </td>
              <td data-label="Version">{r.version}</td>
              <td data-label="Servers">{r.tag ? `tagged ${r.tag}` : 'all'}</td>
              <td data-label="Outcome" className="detail">
                <RolloutStatePill state={r.state} />
                {r.reason ? <div className="muted small">{r.reason}</div> : null}
              </td>
              <td data-label="Updated">
                {r.counts.updated ?? 0} of {total(r)}
              </td>
              <td data-label="Started" className="nowrap">
                {dateTime(r.created_at)}
              </td>
              <td data-label="Ended" className="nowrap">
                {dateTime(r.finished_at)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
