/**
 * A small line of equal-interval values, drawn as SVG; `null` values are gaps (the line stops and
 * starts again, never bridging a silence). The label says in words what it shows, for screen readers.
 */
export function Sparkline({
  values,
  max = 100,
  label,
  width = 96,
  height = 24,
}: {
  values: readonly (number | null)[];
  max?: number;
  label: string;
  width?: number;
  height?: number;
}) {
  const step = values.length > 1 ? width / (values.length - 1) : width;
  const y = (v: number) => height - 1 - (Math.min(Math.max(v, 0), max) / max) * (height - 2);
  const runs: string[] = [];
  const dots: { x: number; y: number }[] = [];
  let run: string[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (run.length > 1) runs.push(run.join(' '));
      else if (run.length === 1) dots.push({ x: (i - 1) * step, y: y(values[i - 1]!) });
      run = [];
      return;
    }
    run.push(`${(i * step).toFixed(1)},${y(v).toFixed(1)}`);
  });
  if (run.length > 1) runs.push(run.join(' '));
  else if (run.length === 1) dots.push({ x: (values.length - 1) * step, y: y(values.at(-1)!) });
  return (
    <svg
      className="sparkline"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      role="img"
      aria-label={label}
      data-runs={runs.length}
    >
      {runs.map((points) => (
        <polyline key={points} points={points} fill="none" stroke="currentColor" strokeWidth="1.5" />
      ))}
      {dots.map((d) => (
        <circle key={`${d.x}`} cx={d.x} cy={d.y} r="1.5" fill="currentColor" />
      ))}
    </svg>
  );
}
