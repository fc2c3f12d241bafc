import type { DashboardServerSummary, FleetCounts, FleetTrend } from '@palisade/protocol';
import { memo, useDeferredValue, useEffect, useMemo, useRef, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ServerScore, StateBadge, UnderAttackBadge } from '../../../components/score';
import { Sparkline } from '../../../components/sparkline';
import { Empty, QueryView } from '../../../components/states';
import {
  ATTENTION,
  type Attention,
  attentionOf,
  type Figure,
  type Heat,
  heat,
  type Limits,
  limitsFor,
} from '../../../lib/attention';
import { bitsPerSecond, percent, since } from '../../../lib/format';
import { compareNames } from '../../../lib/names';
import { useAlertRules } from '../../alerts/api/get-rules';
import { useFleetTrends } from '../api/get-fleet-trends';
import { useServers } from '../api/get-servers';

/** Rows per page: a fleet of 500 stays a short page, and the filter searches all of it. */
export const PAGE_SIZE = 50;

/**
 * A server with what the table works out once per refresh, not once per sort or keystroke: a sort
 * then compares numbers only (2,000 servers sorted by name in ~5 ms, not ~120 ms of string
 * comparisons; docs/dashboard.md, "Fleet").
 */
type Row = DashboardServerSummary & {
  trend: FleetTrend | undefined;
  limits: Limits;
  attention: Attention;
  /** Place in ATTENTION, most urgent first. */
  attentionRank: number;
  /** Place in the fleet sorted by label (numbers by value). */
  labelRank: number;
  /** The figures now; null where unknown (an offline server's last figures are not "now"). */
  figures: Record<'cpu' | 'memory' | 'disk' | 'network', number | null>;
  /** Label, hostname, address and tags in lower case, for the filter. */
  haystack: string;
};
type SortKey = 'attention' | 'label' | 'state' | 'score' | 'cpu' | 'memory' | 'disk' | 'network' | 'last_seen';
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
const isSortKey = (v: string | null): v is SortKey => v === 'attention' || COLUMNS.some((c) => c.key === v);
/**
 * Sorting by a figure starts with the highest, by score with the lowest: the servers to look at
 * first. The default order is "needs attention first" (lib/attention.ts).
 */
const DESCENDING_FIRST: SortKey[] = ['cpu', 'memory', 'disk', 'network', 'last_seen'];
const SORT_NAMES: Record<SortKey, string> = {
  attention: 'needs attention first',
  label: 'name',
  state: 'state',
  score: 'score',
  cpu: 'CPU',
  memory: 'memory',
  disk: 'disk',
  network: 'network',
  last_seen: 'last check-in',
};

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

/** By state, the troubled first. */
const STATE_ORDER = { unreachable: 0, offline: 1, late: 2, online: 3 } as const;

const scoreOf = (s: Row) => s.last_known_score?.score ?? s.score;

function compare(a: Row, b: Row, key: SortKey): number {
  switch (key) {
    case 'attention':
      return a.attentionRank - b.attentionRank || scoreOf(a) - scoreOf(b) || a.labelRank - b.labelRank;
    case 'state':
      return STATE_ORDER[a.state] - STATE_ORDER[b.state];
    case 'score':
      return scoreOf(a) - scoreOf(b);
    case 'last_seen':
      return a.last_seen - b.last_seen;
    case 'label':
      return a.labelRank - b.labelRank;
    default:
      // Unknown figures go last whichever way the column is sorted (handled by the caller).
      return (a.figures[key] ?? 0) - (b.figures[key] ?? 0);
  }
}

const matches = (s: Row, f: StateFilter) => (f === 'under_attack' ? (s.attacks_active ?? 0) > 0 : s.state === f);

/** The address with some settings changed; any change but the page goes back to page 1. */
function withChanges(params: URLSearchParams, changes: Record<string, string | null>): string {
  const next = new URLSearchParams(params);
  for (const [k, v] of Object.entries(changes)) {
    if (v === null || v === '' || v === 'all') next.delete(k);
    else next.set(k, v);
  }
  if (!('page' in changes)) next.delete('page');
  if (next.get('page') === '1') next.delete('page');
  const text = next.toString();
  return text ? `?${text}` : '?';
}

/** How long the address waits after the last keystroke in the filter before it follows. */
const FILTER_URL_DELAY_MS = 300;

/**
 * The filter box's text: typed into local state, so no keystroke waits for (or is lost to) a
 * navigation; the address follows once typing pauses, and the box follows the address when it
 * changes from elsewhere (back, a tag link).
 */
function useFilterText(q: string, set: (changes: Record<string, string | null>) => void) {
  const [text, setText] = useState(q);
  const pushed = useRef(q);
  useEffect(() => {
    if (q !== pushed.current) {
      pushed.current = q;
      setText(q);
    }
  }, [q]);
  useEffect(() => {
    if (text === pushed.current) return;
    const timer = setTimeout(() => {
      pushed.current = text;
      set({ q: text });
    }, FILTER_URL_DELAY_MS);
    return () => clearTimeout(timer);
  }, [text, set]);
  return [text, setText] as const;
}

/** The fleet's view settings, all in the address so a view can be shared, bookmarked and reloaded. */
function useFleetView() {
  const [params, setParams] = useSearchParams();
  const rawState = params.get('state');
  const rawSort = params.get('sort');
  const view = {
    q: params.get('q') ?? '',
    state: isFilter(rawState) ? rawState : ('all' as const),
    tag: params.get('tag') ?? '',
    sort: isSortKey(rawSort) ? rawSort : ('attention' as const),
    dir: params.get('dir') === 'desc' ? -1 : 1,
    page: Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1),
  };
  const hrefWith = (changes: Record<string, string | null>) => withChanges(params, changes);
  /** Changes the address from what it is when the change lands (a debounced change keeps later ones). */
  const set = (changes: Record<string, string | null>) =>
    setParams((current) => new URLSearchParams(withChanges(current, changes)), { replace: true });
  return { view, hrefWith, set };
}

export function FleetTable() {
  const query = useServers();
  const trends = useFleetTrends();
  const rules = useAlertRules();
  const { view, hrefWith, set } = useFleetView();
  const setRef = useRef(set);
  setRef.current = set;
  const [filterText, setFilterText] = useFilterText(
    view.q,
    useMemo(() => (changes: Record<string, string | null>) => setRef.current(changes), []),
  );
  // The table follows the box at React's pace: typing stays immediate however long the list.
  const needle = useDeferredValue(filterText).trim().toLowerCase();

  const servers = query.data?.servers;
  const tags = useMemo(() => [...new Set(servers?.flatMap((s) => s.tags))].sort(), [servers]);
  const rows = useMemo(() => {
    const byId = new Map(trends.data?.servers.map((t) => [t.id, t]));
    const labelRank = new Map(
      (servers ?? [])
        .map((s) => s.label)
        .sort(compareNames)
        .map((label, i) => [label, i]),
    );
    return (servers ?? []).map((s): Row => {
      const trend = byId.get(s.id);
      const now = s.state === 'offline' ? null : trend?.now;
      const limits = limitsFor(s, rules.data?.rules ?? []);
      const figures = {
        cpu: now?.cpu_pct ?? null,
        memory: now?.mem_pct ?? null,
        disk: now?.disk_pct ?? null,
        network: now?.net_bits_per_s ?? null,
      };
      const attention = attentionOf(s, figures, limits);
      return {
        ...s,
        trend,
        limits,
        attention,
        attentionRank: ATTENTION.indexOf(attention),
        labelRank: labelRank.get(s.label)!,
        figures,
        haystack: [s.label, s.hostname, s.public_ip ?? '', ...s.tags].join('\n').toLowerCase(),
      };
    });
  }, [servers, trends.data, rules.data]);
  const shown = useMemo(() => {
    const figureKey = ['cpu', 'memory', 'disk', 'network'].includes(view.sort);
    return rows
      .filter(
        (s) =>
          (view.state === 'all' || matches(s, view.state)) &&
          (!view.tag || s.tags.includes(view.tag)) &&
          (!needle || s.haystack.includes(needle)),
      )
      .sort((a, b) => {
        if (figureKey) {
          const key = view.sort as keyof Row['figures'];
          const known = Number(b.figures[key] !== null) - Number(a.figures[key] !== null);
          if (known !== 0) return known;
        }
        return compare(a, b, view.sort) * view.dir;
      });
  }, [rows, needle, view.state, view.tag, view.sort, view.dir]);

  const pages = Math.max(1, Math.ceil(shown.length / PAGE_SIZE));
  const page = Math.min(view.page, pages);
  const visible = shown.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE);

  const sortHref = (key: SortKey) => {
    const dir = view.sort === key ? (view.dir === 1 ? 'desc' : 'asc') : DESCENDING_FIRST.includes(key) ? 'desc' : 'asc';
    return hrefWith({ sort: key === 'attention' && dir === 'asc' ? null : key, dir: dir === 'asc' ? null : dir });
  };
  const tagHref = useMemo(() => (t: string) => `?tag=${encodeURIComponent(t)}`, []);

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
                  value={filterText}
                  onChange={(e) => setFilterText(e.target.value)}
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
              {view.sort === 'attention' ? null : (
                <Link className="button small" to={hrefWith({ sort: null, dir: null })} replace>
                  Needs attention first
                </Link>
              )}
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
                      Servers, sorted by {SORT_NAMES[view.sort]}
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
                        <FleetRow key={s.id} server={s} tagHref={tagHref} />
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

const FIGURE_NAMES: Record<Figure, string> = { cpu: 'CPU', memory: 'memory', disk: 'disk' };

/** A percentage coloured past its limit (warm within 10 points of it), saying so to a screen reader too. */
function HeatFigure({
  value,
  figure: f,
  limits,
}: {
  value: number | null | undefined;
  figure: Figure;
  limits: Limits;
}) {
  const h: Heat = heat(value, limits[f]);
  return (
    <span
      className={h ? `figure heat-${h}` : 'figure'}
      title={h ? `${FIGURE_NAMES[f]} ${h === 'hot' ? 'at or past' : 'near'} its ${limits[f]} % limit` : undefined}
    >
      {percent(value)}
      {h === 'hot' ? <span className="visually-hidden"> (past the {limits[f]} % limit)</span> : null}
    </span>
  );
}

/** One server's row; drawn again only when its server changes (not on each sort or keystroke). */
const FleetRow = memo(function FleetRow({ server: s, tagHref }: { server: Row; tagHref: (tag: string) => string }) {
  // An offline server's last figures are not "now": shown as unknown, as its score is shown as last known.
  const now = s.state === 'offline' ? null : (s.trend?.now ?? null);
  const cpu = s.trend?.cpu ?? [];
  const known = cpu.filter((v): v is number => v !== null);
  return (
    <tr data-attention={s.attention}>
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
      <td data-label="State" className="nowrap">
        <StateBadge state={s.state} reason={s.state_reason} /> <UnderAttackBadge count={s.attacks_active} />
      </td>
      <td data-label="Score">
        <ServerScore server={s} />
      </td>
      <td data-label="CPU" className="nowrap">
        <HeatFigure value={now?.cpu_pct} figure="cpu" limits={s.limits} />{' '}
        {known.length > 0 ? (
          <Sparkline
            values={cpu}
            label={`CPU over the last hour: ${percent(Math.min(...known))} to ${percent(Math.max(...known))}`}
          />
        ) : null}
      </td>
      <td data-label="Memory" className="nowrap">
        <HeatFigure value={now?.mem_pct} figure="memory" limits={s.limits} />
      </td>
      <td data-label="Disk" className="nowrap">
        <HeatFigure value={now?.disk_pct} figure="disk" limits={s.limits} />
      </td>
      <td data-label="Network" className="nowrap">
        {now?.net_bits_per_s === null || now?.net_bits_per_s === undefined
          ? '—'
          : bitsPerSecond(now.net_bits_per_s / 8)}
      </td>
      <td data-label="Last check-in" className="nowrap">
        {since(s.last_seen, s.as_of)}
      </td>
    </tr>
  );
});
