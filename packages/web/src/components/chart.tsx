import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { pointTime, timeIncrements, timeTick, type ValueFormat } from '../lib/format';
import { isolated } from '../lib/series';
import { useShownTheme } from '../lib/theme';

/**
 * A canvas cannot read CSS variables: a colour such as `var(--chart-cpu)` (styles.css, whose values
 * differ by theme) is resolved to rgb() through an element in the chart's box, at the time it draws.
 */
function cssColor(box: HTMLElement, color: string): string {
  const probe = document.createElement('span');
  probe.style.color = color;
  probe.hidden = true;
  box.append(probe);
  const resolved = getComputedStyle(probe).color;
  probe.remove();
  return resolved;
}

export interface ChartSeries {
  label: string;
  /** One per time; null where nothing was measured (drawn as a gap). */
  values: (number | null)[];
  /** Any CSS colour; a `var(--chart-…)` follows the theme. */
  color: string;
}

/** The chart's box carries its uPlot instance, so a browser test can read the data it was given. */
export type ChartBox = HTMLDivElement & { uplot?: uPlot };

/**
 * A uPlot line chart over a fixed window (`from`–`to`, epoch ms) that follows its container's width.
 * `times` are epoch ms; every series shares `format` (one unit per chart, docs/dashboard.md "Units").
 * The y axis starts at 0 and ends at `max` when given (100 for percentages), else just above the data.
 */
export function LineChart({
  title,
  times,
  series,
  format,
  from,
  to,
  max,
  seconds = false,
  height = 180,
}: {
  title: string;
  times: number[];
  series: ChartSeries[];
  format: ValueFormat;
  from: number;
  to: number;
  max?: number;
  /** Show seconds in the time under the cursor (the live chart's 2 s readings). */
  seconds?: boolean;
  height?: number;
}) {
  const box = useRef<ChartBox>(null);
  const theme = useShownTheme();

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new theme redraws the chart in its colours
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const span = to - from;
    const axis = { stroke: cssColor(el, 'var(--chart-axis)'), grid: { stroke: cssColor(el, 'var(--chart-grid)') } };
    const ticks = { stroke: axis.grid.stroke };
    const opts: uPlot.Options = {
      width: Math.max(200, el.clientWidth),
      height,
      scales: {
        x: { time: true, range: [from / 1000, to / 1000] },
        y: {
          range: (_u, _min, dataMax) => {
            if (max !== undefined) return [0, max];
            const top = Number.isFinite(dataMax) && dataMax > 0 ? dataMax : 1;
            return uPlot.rangeNum(0, top, 0.1, true);
          },
        },
      },
      series: [
        { value: (_u, v) => (v === null ? '—' : pointTime(v * 1000, seconds)) },
        ...series.map((s) => ({
          label: s.label,
          stroke: cssColor(el, s.color),
          width: 2,
          spanGaps: false,
          points: { show: true, size: 5, fill: cssColor(el, s.color), filter: () => isolated(s.values) },
          value: (_u: uPlot, v: number | null) => (v === null ? '—' : format.value(v)),
        })),
      ],
      axes: [
        {
          ...axis,
          ticks,
          incrs: timeIncrements(span),
          values: (_u, splits, _axis, _space, incr) => splits.map((s) => timeTick(s * 1000, span, incr)),
        },
        { ...axis, ticks, size: 84, values: (_u, splits, _axis, _space, incr) => format.ticks(splits, incr) },
      ],
      legend: { show: true },
      cursor: { y: false, drag: { x: false, y: false } },
    };
    const data: uPlot.AlignedData = [times.map((t) => t / 1000), ...series.map((s) => s.values)];
    const plot = new uPlot(opts, data, el);
    el.uplot = plot;
    const observer = new ResizeObserver(() => plot.setSize({ width: Math.max(200, el.clientWidth), height }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.destroy();
      el.uplot = undefined;
    };
  }, [times, series, format, from, to, max, seconds, height, theme]);

  return (
    <figure className="chart">
      <figcaption>{title}</figcaption>
      <div ref={box} className="chart-box" role="img" aria-label={`${title} chart`} />
    </figure>
  );
}
