import type { ServerSummary } from '@palisade/protocol';
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import { OnlineBadge, ScoreBadge } from '../../../components/score';
import { Empty, QueryView } from '../../../components/states';
import { timeAgo } from '../../../lib/format';
import { useServers } from '../api/get-servers';

type SortKey = 'label' | 'hostname' | 'online' | 'score' | 'last_seen' | 'public_ip';
const COLUMNS: { key: SortKey; title: string }[] = [
  { key: 'label', title: 'Label' },
  { key: 'hostname', title: 'Hostname' },
  { key: 'online', title: 'State' },
  { key: 'score', title: 'Score' },
  { key: 'last_seen', title: 'Last seen' },
  { key: 'public_ip', title: 'Public IP' },
];

function compare(a: ServerSummary, b: ServerSummary, key: SortKey): number {
  const x = a[key];
  const y = b[key];
  if (typeof x === 'number' && typeof y === 'number') return x - y;
  if (typeof x === 'boolean' && typeof y === 'boolean') return Number(x) - Number(y);
  return String(x ?? '').localeCompare(String(y ?? ''), undefined, { numeric: true });
}

export function FleetTable() {
  const query = useServers();
  const [filter, setFilter] = useState('');
  const [state, setState] = useState<'all' | 'online' | 'offline'>('all');
  const [sort, setSort] = useState<{ key: SortKey; dir: 1 | -1 }>({ key: 'label', dir: 1 });

  const servers = query.data?.servers;
  const shown = useMemo(() => {
    if (!servers) return [];
    const needle = filter.trim().toLowerCase();
    return servers
      .filter((s) => state === 'all' || s.online === (state === 'online'))
      .filter((s) => !needle || [s.label, s.hostname, s.public_ip ?? ''].some((v) => v.toLowerCase().includes(needle)))
      .sort((a, b) => compare(a, b, sort.key) * sort.dir);
  }, [servers, filter, state, sort]);

  const toggleSort = (key: SortKey) =>
    setSort((s) => (s.key === key ? { key, dir: s.dir === 1 ? -1 : 1 } : { key, dir: key === 'score' ? -1 : 1 }));

  return (
    <QueryView query={query} what="Loading servers">
      {(data) =>
        data.servers.length === 0 ? (
          <Empty>
            <p>No servers yet.</p>
            <p>
              <Link className="button primary" to="/dashboard/servers/add">
                Add your first server
              </Link>
            </p>
          </Empty>
        ) : (
          <>
            <form className="toolbar" aria-label="Filter servers" onSubmit={(e) => e.preventDefault()}>
              <div className="field inline">
                <label htmlFor="fleet-filter">Filter</label>
                <input
                  id="fleet-filter"
                  type="search"
                  placeholder="Label, hostname or IP"
                  value={filter}
                  onChange={(e) => setFilter(e.target.value)}
                />
              </div>
              <div className="field inline">
                <label htmlFor="fleet-state">State</label>
                <select id="fleet-state" value={state} onChange={(e) => setState(e.target.value as typeof state)}>
                  <option value="all">All</option>
                  <option value="online">Online</option>
                  <option value="offline">Offline</option>
                </select>
              </div>
              <p className="muted" role="status" aria-live="polite">
                {shown.length} of {data.servers.length} servers
              </p>
            </form>
            {shown.length === 0 ? (
              <Empty>
                <p>No server matches this filter.</p>
              </Empty>
            ) : (
              <table className="table cards-on-mobile">
                <caption className="visually-hidden">Servers, sorted by {sort.key}</caption>
                <thead>
                  <tr>
                    {COLUMNS.map((c) => (
                      <th
                        key={c.key}
                        scope="col"
                        aria-sort={sort.key === c.key ? (sort.dir === 1 ? 'ascending' : 'descending') : 'none'}
                      >
                        <button type="button" className="sort" onClick={() => toggleSort(c.key)}>
                          {c.title}
                          <span aria-hidden="true">{sort.key === c.key ? (sort.dir === 1 ? ' ▲' : ' ▼') : ''}</span>
                        </button>
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {shown.map((s) => (
                    <tr key={s.id}>
                      <td data-label="Label">
                        <Link to={`/dashboard/servers/${s.id}`}>{s.label}</Link>
                      </td>
                      <td data-label="Hostname">{s.hostname || '—'}</td>
                      <td data-label="State">
                        <OnlineBadge online={s.online} />
                      </td>
                      <td data-label="Score">
                        <ScoreBadge score={s.score} />
                      </td>
                      <td data-label="Last seen">{timeAgo(s.last_seen)}</td>
                      <td data-label="Public IP">{s.public_ip ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </>
        )
      }
    </QueryView>
  );
}
