import { Link } from 'react-router';
import { useControl } from '../api/get-control';
import { BaselinePanel } from './baseline-panel';
import { ControlState } from './control-state';

/** A duration in seconds in the largest unit that keeps it whole enough to read. */
function duration(s: number): string {
  if (s >= 86_400 && s % 3600 === 0) return `${Number((s / 86_400).toPrecision(3))} d`;
  if (s >= 3600) return `${Number((s / 3600).toPrecision(3))} h`;
  if (s >= 60) return `${Number((s / 60).toPrecision(3))} min`;
  return `${s} s`;
}

/** The detection thresholds in effect (config keys and docs/protection.md, "Detection"), each with its unit. */
const ROWS: { key: string; label: string; show: (n: number) => string; config: string }[] = [
  {
    key: 'connLimit',
    label: 'Connection flood',
    show: (n) => `${n} connections from one source`,
    config: 'protection.conn_limit',
  },
  {
    key: 'synLimit',
    label: 'SYN flood',
    show: (n) => `${n} half-open connections from one source`,
    config: 'protection.syn_limit',
  },
  {
    key: 'trafficFactor',
    label: 'Traffic limit',
    show: (n) => `median + ${n} × spread of the learned hour`,
    config: 'protection.traffic_factor',
  },
  {
    key: 'trafficMinPps',
    label: 'Traffic floor',
    show: (n) => `${n.toLocaleString('en')} packets/s`,
    config: 'protection.traffic_min_pps',
  },
  {
    key: 'attackEndS',
    label: 'Attack ends after',
    show: (n) => `${duration(n)} quiet`,
    config: 'protection.attack_end_s',
  },
  { key: 'banS', label: 'First ban', show: duration, config: 'protection.ban_s' },
  { key: 'banMaxS', label: 'Longest ban', show: duration, config: 'protection.ban_max_s' },
  {
    key: 'prefixBanAt',
    label: 'Prefix ban',
    show: (n) => (n === 0 ? 'never' : `${n} banned attackers in one /24 or /64`),
    config: 'protection.prefix_ban_at',
  },
  {
    key: 'checkIntervalMs',
    label: 'Checked every',
    show: (n) => `${n.toLocaleString('en')} ms`,
    config: 'protection.check_interval_ms',
  },
];

/** What counts as an attack on this server, and the learned traffic baseline it is measured against. */
export function DetectionPanel({ serverId, canEdit }: { serverId: number; canEdit: boolean }) {
  const config = useControl(serverId, 'config');
  return (
    <div className="stack">
      <section className="card" aria-labelledby="detection-title">
        <h3 id="detection-title">Detection thresholds</h3>
        <p className="muted">
          Sources crossing these are banned; see what happened under{' '}
          <Link to={`/dashboard/servers/${serverId}/attacks`}>Attacks</Link>. Change them in the agent's config file.
        </p>
        <ControlState query={config} what="Loading the thresholds">
          {(body) => (
            <div className="table-scroll">
              <table className="table" aria-label="Detection thresholds">
                <tbody>
                  {ROWS.map((r) => {
                    const value = body.protection[r.key];
                    return (
                      <tr key={r.key}>
                        <th scope="row">{r.label}</th>
                        <td>{typeof value === 'number' ? r.show(value) : '—'}</td>
                        <td className="nowrap">
                          <code>{r.config}</code>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </div>
          )}
        </ControlState>
      </section>
      <BaselinePanel serverId={serverId} canEdit={canEdit} />
    </div>
  );
}
