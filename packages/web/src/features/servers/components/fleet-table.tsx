import type { DashboardServerSummary, FleetCounts, FleetTrend } from '@palisade/protocol';
import { useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ServerScore, StateBadge, UnderAttackBadge } from '../../../components/score';
import { Sparkline } from '../../../components/sparkline';
import { Empty, QueryView } from '../../../components/states';
import { bitsPerSecond, percent, since } from '../../../lib/format';
import { useFleetTrends } from '../api/get-fleet-trends';
import { useServers } from '../api/get-servers';

/** Rows per page: a fleet of 500 stays a short page, and the filter searches all of it. */
export const PAGE_SIZE = 50;

type Row = DashboardServerSummary & { trend: FleetTrend | undefined };
type SortKey = 'label' | 'state' | 'score' | 'cpu' | 'memory' | 'disk' | 'network' | 'last_seen';
const COLUMNS: { key: SortKey; title: string }[] = [
  { key: 'label', title: 'Server' },
  { key: 'state', title: 'State' },
  { key: 'score', title: 'Score' },
  { key: 'cpu', title: 'CPU' },
  { key: 'memory', title: 'Memory' },
  { key: 'disk', title: 'Disk' },
  { key: 'network', title: 'Network' },
  { key: 'last_seen', title: 'Last check-in' },
];
const isSortKey = (v: string | null): v is SortKey => COLUMNS.some((c) => c.key === v);
/** Sorting by a figure starts with the highest: the busiest servers are the ones to look at. */
const DESCENDING_FIRST: SortKey[] = ['score', 'cpu', 'memory', 'disk', 'network', 'last_seen'];

/** The fleet filters by state, kept in the address (`?state=…`) so a filtered view can be shared and reloaded. */
const FILTERS = [
  { id: 'online', title: 'Online' },
  { id: 'late', title: 'Late' },
  { id: 'unreachable', title: 'Unreachable' },
  { id: 'offline', title: 'Offline' },
  { id: 'under_attack', title: 'Under attack' },
] as const satisfies readonly { id: keyof FleetCounts; title: string }[];
type StateFilter = (typeof FILTERS)[number]['id'];
const isFilter = (v: string | null): v is StateFilter => FILTERS.some((f) => f.id === v);

const STATE_ORDER = { online: 0, unreachable: 1, late: 2, offline: 3 } as const;

/** A server's figure for a column; an offline server's figures are not "now", so they sort as unknown. */
function figure(s: Row, key: 'cpu' | 'memory' | 'disk' | 'network'): number | null {
  const now = s.state === 'offline' ? null : s.trend?.now;
  if (!now) return null;
  return { cpu: now.cpu_pct, memory: now.mem_pct, disk: now.disk_pct, network: now.net_bits_per_s }[key];
}

function compare(a: Row, b: Row, key: SortKey): number {
  switch (key) {
    case 'state':
      return STATE_ORDER[a.state] - STATE_ORDER[b.state];
    case 'score':
      return (a.last_known_score?.score ?? a.score) - (b.last_known_score?.score ?? b.score);
    case 'last_seen':
      return a.last_seen - b.last_seen;
    case 'label':
      return a.label.localeCompare(b.label, undefined, { numeric: true });
    default:
      // Unknown figures go last whichever way the column is sorted (handled by the caller).
      return (figure(a, key) ?? 0) - (figure(b, key) ?? 0);
  }
}

const matches = (s: Row, f: StateFilter) => (f === 'under_attack' ? (s.attacks_active ?? 0) > 0 : s.state === f);

/** The fleet's view settings, all in the address so a view can be shared, bookmarked and reloaded. */
function useFleetView() {
  const [params, setParams] = useSearchParams();
  const rawState = params.get('state');
  const rawSort = params.get('sort');
  const view = {
    q: params.get('q') ?? '',
    state: isFilter(rawState) ? rawState : ('all' as const),
    tag: params.get('tag') ?? '',
    sort: isSortKey(rawSort) ? rawSort : ('label' as const),
    dir: params.get('dir') === 'desc' ? -1 : 1,
    page: Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1),
  };
  /** The address with some settings changed; any change but the page goes back to page 1. */
  const hrefWith = (changes: Record<string, string | null>) => {
    const next = new URLSearchParams(params);
    for (const [k, v] of Object.entries(changes)) {
      if (v === null || v === '' || v === 'all') next.delete(k);
      else next.set(k, v);
    }
    if (!('page' in changes)) next.delete('page');
    if (next.get('page') === '1') next.delete('page');
    const text = next.toString();
    return text ? `?${text}` : '?';
  };
  const set = (changes: Record<string, string | null>) =>
    setParams(new URLSearchParams(hrefWith(changes)), { replace: true });
  return { view, hrefWith, set };
}

export function FleetTable() {
  const query = useServers();
  const trends = useFleetTrends();
  const { view, hrefWith, set } = useFleetView();

  const servers = query.data?.servers;
  const byId = useMemo(() => new Map(trends.data?.servers.map((t) => [t.id, t])), [trends.data]);
  const tags = useMemo(() => [...new Set(servers?.flatMap((s) => s.tags))].sort(), [servers]);
  const shown = useMemo(() => {
    if (!servers) return [];
    const needle = view.q.trim().toLowerCase();
    const rows: Row[] = servers.map((s) => ({ ...s, trend: byId.get(s.id) }));
    const figureKey = ['cpu', 'memory', 'disk', 'network'].includes(view.sort);
    return rows
      .filter((s) => view.state === 'all' || matches(s, view.state))
      .filter((s) => !view.tag || s.tags.includes(view.tag))
      .filter(
        (s) =>
          !needle || [s.label, s.hostname, s.public_ip ?? '', ...s.tags].some((v) => v.toLowerCase().includes(needle)),
      )
      .sort((a, b) => {
        if (figureKey) {
          const known = Number(figure(b, view.sort as 'cpu') !== null) - Number(figure(a, view.sort as 'cpu') !== null);
          if (known !== 0) return known;
        }
        return compare(a, b, view.sort) * view.dir;
      });
  }, [servers, byId, view.q, view.state, view.tag, view.sort, view.dir]);

  const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
  const page = Math.min(view.page, pages);
  const visible = shown.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);

  const sortHref = (key: SortKey) => {
    const dir = view.sort === key ? (view.dir === 1 ? 'desc' : 'asc') : DESCENDING_FIRST.includes(key) ? 'desc' : 'asc';
    return hrefWith({ sort: key === 'label' && dir === 'asc' ? null : key, dir: dir === 'asc' ? null : dir });
  };

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
            <nav className="state-filters" aria-label="Servers by state">
              <Link to={hrefWith({ state: null })} aria-current={view.state === 'all' ? 'true' : undefined}>
                All <strong>{data.servers.length}</strong>
              </Link>
              {FILTERS.map((f) => (
                <Link
                  key={f.id}
                  to={hrefWith({ state: f.id })}
                  aria-current={view.state === f.id ? 'true' : undefined}
                  className={data.counts[f.id] > 0 ? `state-filter-${f.id}` : undefined}
                  data-testid={`count-${f.id}`}
                >
                  {f.title} <strong>{data.counts[f.id]}</strong>
                </Link>
              ))}
            </nav>
            <form className="toolbar" aria-label="Filter servers" onSubmit={(e) => e.preventDefault()}>
              <div className="field inline">
                <label htmlFor="fleet-filter">Filter</label>
                <input
                  id="fleet-filter"
                  type="search"
                  placeholder="Label, hostname, IP or tag"
                  value={view.q}
                  onChange={(e) => set({ q: e.target.value })}
                />
              </div>
              <div className="field inline">
                <label htmlFor="fleet-state">State</label>
                <select id="fleet-state" value={view.state} onChange={(e) => set({ state: e.target.value })}>
                  <option value="all">All</option>
                  {FILTERS.map((f) => (
                    <option key={f.id} value={f.id}>
                      {f.title}
                    </option>
                  ))}
                </select>
              </div>
              {tags.length > 0 ? (
                <div className="field inline">
                  <label htmlFor="fleet-tag">Tag</label>
                  <select id="fleet-tag" value={view.tag} onChange={(e) => set({ tag: e.target.value })}>
                    <option value="">Any</option>
                    {tags.map((t) => (
                      <option key={t} value={t}>
                        {t}
                      </option>
                    ))}
                  </select>
                </div>
              ) : null}
              <p className="muted" role="status" aria-live="polite">
                {shown.length} of {data.servers.length} servers
              </p>
            </form>
            {shown.length === 0 ? (
              <Empty>
                <p>No server matches this filter.</p>
              </Empty>
            ) : (
              <>
                <div className="table-scroll">
                  <table className="table cards-on-mobile fleet">
                    <caption className="visually-hidden">
                      Servers, sorted by {view.sort}
                      {pages > 1 ? `, page ${page} of ${pages}` : ''}
                    </caption>
                    <thead>
                      <tr>
                        {COLUMNS.map((c) => (
                          <th
                            key={c.key}
                            scope="col"
                            aria-sort={view.sort === c.key ? (view.dir === 1 ? 'ascending' : 'descending') : 'none'}
                          >
                            <Link className="sort" to={sortHref(c.key)} replace>
                              {c.title}
                              <span aria-hidden="true">
                                {view.sort === c.key ? (view.dir === 1 ? ' ▲' : ' ▼') : ''}
                              </span>
                            </Link>
                          </th>
                        ))}
                      </tr>
                    </thead>
                    <tbody>
                      {visible.map((s) => (
                        <FleetRow key={s.id} server={s} tagHref={(t) => hrefWith({ tag: t })} />
                      ))}
                    </tbody>
                  </table>
                </div>
                {pages > 1 ? (
                  <nav className="pager" aria-label="Pages">
                    {page > 1 ? (
                      <Link to={hrefWith({ page: String(page - 1) })} rel="prev">
                        ← Previous
                      </Link>
                    ) : (
                      <span />
                    )}
                    <span>
                      Page {page} of {pages} · servers {(page - 1) * PAGE_SIZE + 1}–
                      {Math.min(page * PAGE_SIZE, shown.length)}
                    </span>
                    {page < pages ? (
                      <Link to={hrefWith({ page: String(page + 1) })} rel="next">
                        Next →
                      </Link>
                    ) : (
                      <span />
                    )}
                  </nav>
                ) : null}
              </>
            )}
          </>
        )
      }
    </QueryView>
  );
}

function FleetRow({ server: s, tagHref }: { server: Row; tagHref: (tag: string) => string }) {
  // An offline server's last figures are not "now": shown as unknown, as its score is shown as last known.
  const now = s.state === 'offline' ? null : (s.trend?.now ?? null);
  const cpu = s.trend?.cpu ?? [];
  const known = cpu.filter((v): v is number => v !== null);
  return (
    <tr>
      <td data-label="Server">
        <Link to={`/dashboard/servers/${s.id}`}>{s.label}</Link>
        <div className="muted small nowrap">
          {s.hostname}
          {s.public_ip ? ` · ${s.public_ip}` : ''}
        </div>
        {s.tags.length > 0 ? (
          <ul className="tags" aria-label="Tags">
            {s.tags.map((t) => (
              <li key={t}>
                <Link className="tag" to={tagHref(t)} title={`Only servers tagged ${t}`}>
                  {t}
                </Link>
              </li>
            ))}
          </ul>
        ) : null}
      </td>
      <td data-label="State">
        <StateBadge state={s.state} reason={s.state_reason} /> <UnderAttackBadge count={s.attacks_active} />
      </td>
      <td data-label="Score">
        <ServerScore server={s} />
      </td>
      <td data-label="CPU" className="nowrap">
        <span className="figure">{percent(now?.cpu_pct)}</span>{' '}
        {known.length > 0 ? (
          <Sparkline
            values={cpu}
            label={`CPU over the last hour: ${percent(Math.min(...known))} to ${percent(Math.max(...known))}`}
          />
        ) : null}
      </td>
      <td data-label="Memory">{percent(now?.mem_pct)}</td>
      <td data-label="Disk">{percent(now?.disk_pct)}</td>
      <td data-label="Network" className="nowrap">
        {now?.net_bits_per_s === null || now?.net_bits_per_s === undefined
          ? '—'
          : bitsPerSecond(now.net_bits_per_s / 8)}
      </td>
      <td data-label="Last check-in">{since(s.last_seen, s.as_of)}</td>
    </tr>
  );
}
