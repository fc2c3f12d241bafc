import { useEffect, useMemo, useRef, useState } from 'react';
import { LineChart } from '../../../components/chart';
import { ErrorNote, Loading } from '../../../components/states';
import { bitsPerSecond, megabytes, percent, timeAgo } from '../../../lib/format';
import type { AgentMetrics } from '../../../lib/wire';
import { LIVE_INTERVAL_MS, useLiveMetrics } from '../api/get-live-metrics';

const KEEP = 90; // three minutes of 2 s readings

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

  useEffect(() => {
    const m = query.data;
    if (!m || m.ts === last.current) return;
    last.current = m.ts;
    setTrail((t) => [...t.slice(-(KEEP - 1)), m]);
  }, [query.data]);

  const times = useMemo(() => trail.map((m) => m.ts), [trail]);
  const cpuSeries = useMemo(
    () => [
      {
        label: 'CPU %',
        values: trail.map((m) => m.cpu.pct),
        color: '#2563eb',
        format: (v: number) => `${v.toFixed(0)}%`,
      },
      { label: 'Memory %', values: trail.map((m) => m.memory.pct), color: '#9333ea' },
    ],
    [trail],
  );

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
              <dd>{m.cpu.load1 ?? '—'}</dd>
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
                {m.attacks.active} active <span className="muted">/ {m.attacks.total}</span>
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
          {trail.length > 1 ? (
            <LineChart title="CPU and memory, last minutes" times={times} series={cpuSeries} />
          ) : null}
        </>
      ) : null}
    </section>
  );
}
