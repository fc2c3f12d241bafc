import type { HistoryRange, HistorySection } from '@palisade/protocol';
import { useMemo, useState } from 'react';
import { LineChart } from '../../../components/chart';
import { QueryView } from '../../../components/states';
import { BITS_FORMAT, PERCENT_FORMAT, PLAIN_FORMAT } from '../../../lib/format';
import { historySeries } from '../../../lib/series';
import { useServerSection } from '../api/get-server-section';

const RANGES: { value: HistoryRange; label: string }[] = [
  { value: '1h', label: '1 hour' },
  { value: '24h', label: '24 hours' },
  { value: '7d', label: '7 days' },
  { value: '30d', label: '30 days' },
];

function Charts({ history }: { history: HistorySection }) {
  const { times, usage, load, net } = useMemo(() => historySeries(history), [history]);
  const span = { from: history.from, to: history.to };
  return (
    <div className="charts" data-testid="history-charts" data-range={history.range}>
      {history.samples.length === 0 ? (
        <p className="muted">
          No samples in this range yet: they arrive with each check-in. The charts fill in from the right.
        </p>
      ) : null}
      <LineChart
        title="CPU, memory and disk (%)"
        times={times}
        series={usage}
        format={PERCENT_FORMAT}
        max={100}
        {...span}
      />
      <LineChart title="Load (1 min average, no unit)" times={times} series={load} format={PLAIN_FORMAT} {...span} />
      <LineChart title="Network (bit/s)" times={times} series={net} format={BITS_FORMAT} {...span} />
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
