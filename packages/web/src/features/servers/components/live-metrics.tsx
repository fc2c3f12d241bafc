import type { AgentMetrics } from '@palisade/protocol';
import { useEffect, useMemo, useRef, useState } from 'react';
import { LineChart } from '../../../components/chart';
import { ErrorNote, Loading } from '../../../components/states';
import { bitsPerSecond, figure, megabytes, PERCENT_FORMAT, percent, timeAgo } from '../../../lib/format';
import { invalidate } from '../../../lib/query';
import { LIVE_WINDOW_MS, liveChart } from '../../../lib/series';
import { LIVE_INTERVAL_MS, useLiveMetrics } from '../api/get-live-metrics';
import { serverKey } from '../api/get-server';
import { useServerSection } from '../api/get-server-section';

/** Readings kept for the live chart's window (2 s apart). */
const KEEP = LIVE_WINDOW_MS / LIVE_INTERVAL_MS;
/** The snapshot's `attacks` part is described in docs/agent.md, not in the shared schema: read its counts with care. */
const count = (value: unknown) => (typeof value === 'number' ? figure(value) : '—');

/** Live readings polled through the console every 2 s while the tab is visible. */
export function LiveMetrics({ serverId }: { serverId: number }) {
  const query = useLiveMetrics(serverId);
  const [trail, setTrail] = useState<AgentMetrics[]>([]);
  const last = useRef(0);
  const [hidden, setHidden] = useState(document.visibilityState !== 'visible');

  useEffect(() => {
    const onChange = () => setHidden(document.visibilityState !== 'visible');
    document.addEventListener('visibilitychange', onChange);
    return () => document.removeEventListener('visibilitychange', onChange);
  }, []);

  // The console records each call's outcome in the server's state: when the agent stops or starts
  // answering, the header asks for the state again at once rather than at its next refresh.
  const failing = query.errorMessage !== null;
  const wasFailing = useRef(failing);
  useEffect(() => {
    if (failing === wasFailing.current) return;
    wasFailing.current = failing;
    void invalidate(serverKey(serverId), { exact: true });
  }, [failing, serverId]);

  useEffect(() => {
    const m = query.data;
    if (!m || m.ts === last.current) return;
    last.current = m.ts;
    setTrail((t) => [...t.slice(-(KEEP - 1)), m]);
  }, [query.data]);

  // The chart starts from the console's recent samples (the 1 h history, 10 s buckets), so a reload
  // keeps the last minutes, then adds each live reading (docs/dashboard.md, "Charts").
  const recent = useServerSection(serverId, 'history', '1h').data;
  const chart = useMemo(() => liveChart(recent, trail), [recent, trail]);

  const m = query.data;
  return (
    <section className="card" aria-labelledby="live-title">
      <div className="card-head">
        <h2 id="live-title">Live</h2>
        <span className="muted small" aria-live="off">
          {hidden ? 'Paused while the tab is hidden' : `Every ${LIVE_INTERVAL_MS / 1000} s`}
        </span>
      </div>
      {!m && !query.errorMessage ? <Loading what="Asking the agent" /> : null}
      {query.errorMessage ? (
        <ErrorNote
          message={`${query.errorMessage === 'agent unreachable' ? 'The agent does not answer right now.' : query.errorMessage}${m ? ' Showing the last reading.' : ''}`}
        />
      ) : null}
      {m ? (
        <>
          <dl className="tiles" data-testid="live-metrics" data-ts={m.ts}>
            <div>
              <dt>CPU</dt>
              <dd>{percent(m.cpu.pct)}</dd>
            </div>
            <div>
              <dt>Memory</dt>
              <dd>
                {megabytes(m.memory.used_mb)} <span className="muted">/ {megabytes(m.memory.total_mb)}</span>
              </dd>
            </div>
            <div>
              <dt>Load</dt>
              <dd>{m.cpu.load1 === null ? '—' : figure(m.cpu.load1)}</dd>
            </div>
            <div>
              <dt>In</dt>
              <dd>{bitsPerSecond(m.network.rx_bps)}</dd>
            </div>
            <div>
              <dt>Out</dt>
              <dd>{bitsPerSecond(m.network.tx_bps)}</dd>
            </div>
            <div>
              <dt>Attacks</dt>
              <dd>
                {count(m.attacks.active)} active <span className="muted">/ {count(m.attacks.total)}</span>
              </dd>
            </div>
            <div>
              <dt>Protection</dt>
              <dd>{m.protection.backend === 'nftables' ? 'nftables' : 'Monitor only'}</dd>
            </div>
            <div>
              <dt>Reading</dt>
              <dd>
                <time dateTime={new Date(m.ts).toISOString()}>{timeAgo(m.ts)}</time>
              </dd>
            </div>
          </dl>
          {m.disks.length > 0 ? (
            <p className="muted small">Disks: {m.disks.map((d) => `${d.mount} ${percent(d.pct)}`).join(' · ')}</p>
          ) : null}
        </>
      ) : null}
      {/* Drawn from the recent history at once, even before (or without) a live reading. */}
      {chart.times.length > 1 ? (
        <LineChart
          title="CPU and memory, last minutes"
          times={chart.times}
          series={chart.series}
          format={PERCENT_FORMAT}
          max={100}
          from={chart.from}
          to={chart.to}
          seconds
        />
      ) : null}
    </section>
  );
}
