import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  format?: (v: number) => string;
}

/** A uPlot line chart that follows its container's width. `times` are epoch ms. */
export function LineChart({
  title,
  times,
  series,
  height = 180,
}: {
  title: string;
  times: number[];
  series: ChartSeries[];
  height?: number;
}) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const fmt = series[0]?.format;
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      series: [
        {},
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          ...(s.format ? { value: (_u: uPlot, v: number | null) => (v === null ? '—' : s.format!(v)) } : {}),
        })),
      ],
      axes: [{}, { size: 70, ...(fmt ? { values: (_u: uPlot, vals: number[]) => vals.map((v) => fmt(v)) } : {}) }],
      legend: { show: true },
      cursor: { drag: { x: false, y: false } },
    };
    const data: uPlot.AlignedData = [times.map((t) => t / 1000), ...series.map((s) => s.values)];
    plot.current = new uPlot(opts, data, el);
    const observer = new ResizeObserver(() => {
      plot.current?.setSize({ width: Math.max(200, el.clientWidth), height });
    });
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [times, series, height]);

  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} className="chart-box" role="img" aria-label={`${title} chart`} />
    </figure>
  );
}
