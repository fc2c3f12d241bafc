import type { Rollout, RolloutServer, UpdateServerState } from '@palisade/protocol';
import { useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import { ConfirmButton } from '../../../components/buttons';
import { Empty, ErrorNote, StatusLine } from '../../../components/states';
import { dateTime, timeAgo } from '../../../lib/format';
import { compareNames } from '../../../lib/names';
import { useMutation } from '../../../lib/query';
import { cancelRollout } from '../api/agent-updates';
import { minutesText, RolloutStatePill, SERVER_STATE_ORDER, SERVER_STATES, ServerStatePill, servers } from './labels';

/** Rows per page of the servers table: 200 servers are four short pages, and the state filter searches all. */
export const ROLLOUT_PAGE_SIZE = 50;

type Counts = Partial<Record<UpdateServerState, number>>;

const countStates = (list: RolloutServer[]): Counts => {
  const counts: Counts = {};
  for (const s of list) counts[s.state] = (counts[s.state] ?? 0) + 1;
  return counts;
};

/** What a wave is doing, in words, from its servers' states and the rollout's. */
function waveWord(rollout: Rollout, index: number, counts: Counts, size: number): string {
  const done = (counts.updated ?? 0) + (counts.skipped ?? 0);
  if (size > 0 && done === size && !counts.skipped) return 'done';
  if (index < rollout.current_wave) return 'done';
  if (index > rollout.current_wave) return rollout.state === 'running' ? 'waits for the wave before' : 'not started';
  if (rollout.state === 'running') return 'in progress';
  if (rollout.state === 'failed') return 'failed here';
  if (rollout.state === 'cancelled') return 'cancelled here';
  return 'done';
}

/** One wave: a bar split by state (the proportions) and the counts beside it in words (the figures). */
function WaveBar({ rollout, index, list }: { rollout: Rollout; index: number; list: RolloutServer[] }) {
  const counts = countStates(list);
  const size = list.length;
  const present = SERVER_STATE_ORDER.filter((s) => (counts[s] ?? 0) > 0);
  return (
    <li className="wave" data-testid={`wave-${index + 1}`}>
      <div className="wave-head">
        <strong>
          Wave {index + 1} of {rollout.wave_count}
        </strong>
        <span className="muted">
          {servers(size)} · {waveWord(rollout, index, counts, size)}
        </span>
      </div>
      <div className="wave-bar" aria-hidden="true">
        {present.map((s) => (
          <span
            key={s}
            className={`wave-part wave-${s}`}
            style={{ width: `${((counts[s] ?? 0) / Math.max(1, size)) * 100}%` }}
          />
        ))}
      </div>
      {size === 0 ? (
        <p className="muted small">No servers left for this wave.</p>
      ) : (
        <ul className="wave-counts" aria-label={`Wave ${index + 1} by state`}>
          {present.map((s) => (
            <li key={s}>
              <span className={`wave-swatch wave-${s}`} aria-hidden="true" />
              {SERVER_STATES[s].text} <strong>{counts[s]}</strong>
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** The servers table's filter and page, kept in the address (`?state=&page=`) like the fleet's. */
function useServerView() {
  const [params, setParams] = useSearchParams();
  const raw = params.get('state');
  const state = SERVER_STATE_ORDER.includes(raw as UpdateServerState) ? (raw as UpdateServerState) : null;
  const page = Math.max(1, Number.parseInt(params.get('page') ?? '1', 10) || 1);
  const set = (changes: { state?: UpdateServerState | null; page?: number }) => {
    const next = new URLSearchParams(params);
    if ('state' in changes) {
      if (changes.state) next.set('state', changes.state);
      else next.delete('state');
      next.delete('page');
    }
    if (changes.page !== undefined) {
      if (changes.page > 1) next.set('page', String(changes.page));
      else next.delete('page');
    }
    setParams(next, { replace: true });
  };
  return { state, page, set };
}

function ServersTable({ rollout, list }: { rollout: Rollout; list: RolloutServer[] }) {
  const view = useServerView();
  const counts = countStates(list);
  const shown = useMemo(
    () =>
      list
        .filter((s) => view.state === null || s.state === view.state)
        .sort((a, b) => a.wave - b.wave || compareNames(a.name, b.name)),
    [list, view.state],
  );
  const pages = Math.max(1, Math.ceil(shown.length / ROLLOUT_PAGE_SIZE));
  const page = Math.min(view.page, pages);
  const visible = shown.slice((page - 1) * ROLLOUT_PAGE_SIZE, page * ROLLOUT_PAGE_SIZE);
  const filterButton = (state: UpdateServerState | null, label: string, n: number) => (
    <button
      key={state ?? 'all'}
      type="button"
      aria-pressed={view.state === state}
      className={`state-filter${state ? ` filter-${state}` : ''}`}
      onClick={() => view.set({ state })}
      {...(state ? { title: SERVER_STATES[state].hint } : {})}
    >
      {label} <strong>{n}</strong>
    </button>
  );

  return (
    <section className="stack" aria-labelledby={`rollout-${rollout.id}-servers`}>
      <h3 id={`rollout-${rollout.id}-servers`}>Servers</h3>
      <fieldset className="state-filters">
        <legend className="visually-hidden">Servers by state</legend>
        {filterButton(null, 'All', list.length)}
        {SERVER_STATE_ORDER.filter((s) => (counts[s] ?? 0) > 0 || s === view.state).map((s) =>
          filterButton(s, SERVER_STATES[s].text, counts[s] ?? 0),
        )}
      </fieldset>
      <p className="muted" role="status" aria-live="polite">
        {shown.length} of {servers(list.length)}
        {view.state ? ` ${SERVER_STATES[view.state].text.toLowerCase()}` : ''}
      </p>
      {shown.length === 0 ? (
        <Empty>
          <p>{list.length === 0 ? 'No server is in this rollout.' : 'No server is in this state now.'}</p>
        </Empty>
      ) : (
        <div className="table-scroll">
          <table className="table cards-on-mobile rollout-servers">
            <caption className="visually-hidden">
              Servers in rollout {rollout.id}
              {pages > 1 ? `, page ${page} of ${pages}` : ''}
            </caption>
            <thead>
              <tr>
                <th scope="col">Server</th>
                <th scope="col">Wave</th>
                <th scope="col">Version</th>
                <th scope="col">State</th>
                <th scope="col">Reason</th>
                <th scope="col">Last change</th>
              </tr>
            </thead>
            <tbody>
              {visible.map((s) => (
                <tr key={s.server_id} data-server={s.name}>
                  <td data-label="Server" className="nowrap">
                    <Link to={`/dashboard/servers/${s.server_id}`}>{s.name}</Link>
                  </td>
                  <td data-label="Wave">{s.wave + 1}</td>
                  <td data-label="Version" className="nowrap">
                    {s.from_version ?? 'unknown'} → {rollout.version}
                    {s.agent_version && s.agent_version !== s.from_version && s.agent_version !== rollout.version ? (
                      <span className="muted"> (now {s.agent_version})</span>
                    ) : null}
                  </td>
                  <td data-label="State" className="nowrap">
                    <ServerStatePill state={s.state} />
                  </td>
                  <td data-label="Reason" className="detail">
                    {s.reason ?? <span className="muted">—</span>}
                  </td>
                  <td data-label="Last change" className="nowrap">
                    <time dateTime={new Date(s.updated_at).toISOString()} title={dateTime(s.updated_at)}>
                      {timeAgo(s.updated_at)}
                    </time>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {pages > 1 ? (
        <nav className="pager" aria-label="Pages of servers">
          {page > 1 ? (
            <button type="button" className="button small" onClick={() => view.set({ page: page - 1 })}>
              ← Previous
            </button>
          ) : (
            <span />
          )}
          <span>
            Page {page} of {pages} · servers {(page - 1) * ROLLOUT_PAGE_SIZE + 1}–
            {Math.min(page * ROLLOUT_PAGE_SIZE, shown.length)}
          </span>
          {page < pages ? (
            <button type="button" className="button small" onClick={() => view.set({ page: page + 1 })}>
              Next →
            </button>
          ) : (
            <span />
          )}
        </nav>
      ) : null}
    </section>
  );
}

/**
 * A rollout as it goes (docs/fleet.md, "Agent updates"): what it updates to and where, per wave a bar
 * of its servers by state, every server with its state and reason, and Cancel while it runs.
 */
export function RolloutProgress({ rollout, list }: { rollout: Rollout; list: RolloutServer[] }) {
  const cancel = useMutation(() => cancelRollout(rollout.id));
  const byWave = useMemo(
    () => Array.from({ length: rollout.wave_count }, (_, i) => list.filter((s) => s.wave === i)),
    [list, rollout.wave_count],
  );
  const updated = list.filter((s) => s.state === 'updated').length;
  return (
    <div className="stack rollout" data-testid={`rollout-${rollout.id}`}>
      <div className="rollout-head">
        <h2 id={`rollout-${rollout.id}-title`}>
          Rollout {rollout.id} to {rollout.version}
        </h2>
        <RolloutStatePill state={rollout.state} />
      </div>
      <dl className="facts rollout-facts">
        <div>
          <dt>Servers</dt>
          <dd>{rollout.tag ? `tagged ${rollout.tag}` : 'all servers'}</dd>
        </div>
        <div>
          <dt>Updated</dt>
          <dd data-testid="rollout-updated">
            {updated} of {servers(list.length)}
          </dd>
        </div>
        <div>
          <dt>Waves</dt>
          <dd>
            <code>{rollout.waves}</code>
            {rollout.state === 'running'
              ? `, wave ${rollout.current_wave + 1} of ${rollout.wave_count} in progress`
              : ''}
          </dd>
        </div>
        <div>
          <dt>Health timeout</dt>
          <dd>{minutesText(rollout.health_timeout_s)}</dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>{dateTime(rollout.created_at)}</dd>
        </div>
        {rollout.finished_at ? (
          <div>
            <dt>Ended</dt>
            <dd>{dateTime(rollout.finished_at)}</dd>
          </div>
        ) : null}
      </dl>
      {rollout.reason ? (
        <p className={`note ${rollout.state === 'failed' ? 'note-bad' : 'note-muted'}`} data-testid="rollout-reason">
          {rollout.reason}
        </p>
      ) : null}
      {rollout.state === 'running' ? (
        <div className="actions">
          <ConfirmButton
            label="Cancel rollout"
            confirmLabel="Yes, cancel the rollout"
            busy={cancel.pending}
            onConfirm={() => void cancel.run(undefined)}
          />
          <span className="muted small">
            Pending servers are skipped; servers already updating finish on their own.
          </span>
        </div>
      ) : null}
      <ErrorNote message={cancel.error} />
      {cancel.data !== undefined && rollout.state === 'cancelled' ? <StatusLine>Rollout cancelled.</StatusLine> : null}
      <ol className="waves" aria-label="Waves">
        {byWave.map((wave, i) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a wave is its index
          <WaveBar key={i} rollout={rollout} index={i} list={wave} />
        ))}
      </ol>
      <ServersTable rollout={rollout} list={list} />
    </div>
  );
}
