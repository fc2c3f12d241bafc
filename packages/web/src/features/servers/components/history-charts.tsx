import { useMemo, useState } from 'react';
import { LineChart } from '../../../components/chart';
import { Empty, QueryView } from '../../../components/states';
import { bitsPerSecond } from '../../../lib/format';
import type { HistoryRange, HistorySection } from '../../../lib/wire';
import { useServerSection } from '../api/get-server-section';

const RANGES: { value: HistoryRange; label: string }[] = [
  { value: '1h', label: '1 hour' },
  { value: '24h', label: '24 hours' },
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
];

function Charts({ history }: { history: HistorySection }) {
  const times = useMemo(() => history.samples.map((s) => s.ts), [history]);
  const usage = useMemo(
    () => [
      {
        label: 'CPU %',
        values: history.samples.map((s) => s.cpu_pct),
        color: '#2563eb',
        format: (v: number) => `${v.toFixed(0)}%`,
      },
      {
        label: 'Memory %',
        values: history.samples.map((s) => (s.mem_total_mb > 0 ? (100 * s.mem_used_mb) / s.mem_total_mb : null)),
        color: '#9333ea',
      },
      { label: 'Disk %', values: history.samples.map((s) => s.disk_used_pct), color: '#d97706' },
    ],
    [history],
  );
  const load = useMemo(
    () => [{ label: 'Load (1 min)', values: history.samples.map((s) => s.load1), color: '#0d9488' }],
    [history],
  );
  const net = useMemo(
    () => [
      { label: 'In', values: history.samples.map((s) => s.rx_bps), color: '#16a34a', format: bitsPerSecond },
      { label: 'Out', values: history.samples.map((s) => s.tx_bps), color: '#dc2626', format: bitsPerSecond },
    ],
    [history],
  );
  if (history.samples.length === 0)
    return (
      <Empty>
        <p>No samples in this range yet. They arrive with each check-in.</p>
      </Empty>
    );
  return (
    <div className="charts">
      <LineChart title="CPU, memory and disk (%)" times={times} series={usage} />
      <LineChart title="Load" times={times} series={load} />
      <LineChart title="Network" times={times} series={net} />
    </div>
  );
}

export function HistoryCharts({ serverId }: { serverId: number }) {
  const [range, setRange] = useState<HistoryRange>('1h');
  const query = useServerSection(serverId, 'history', range);
  return (
    <section className="card" aria-labelledby="history-title">
      <div className="card-head">
        <h2 id="history-title">History</h2>
        <fieldset className="segmented">
          <legend className="visually-hidden">Range</legend>
          {RANGES.map((r) => (
            <label key={r.value} className={range === r.value ? 'active' : ''}>
              <input
                type="radio"
                name="history-range"
                value={r.value}
                checked={range === r.value}
                onChange={() => setRange(r.value)}
              />
              {r.label}
            </label>
          ))}
        </fieldset>
      </div>
      <QueryView query={query} what="Loading history">
        {(h) => <Charts history={h} />}
      </QueryView>
    </section>
  );
}
