import type { BenchmarkRunView } from '@palisade/protocol';
import { BENCHMARK_FIGURES, type BenchmarkFigure, figurePoints, figureValue } from '@palisade/protocol/benchmark';
import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { Empty, ErrorNote, QueryView, StatusLine } from '../../../components/states';
import { ApiError } from '../../../lib/api';
import { change, dateTime, figure, withUnit } from '../../../lib/format';
import { useCatalog } from '../../billing/api/get-catalog';
import { useProducts } from '../../billing/api/get-products';
import { useBenchmarks } from '../api/get-benchmarks';
import { useServer } from '../api/get-server';
import { checkRunBenchmark, useRunBenchmark } from '../api/run-benchmark';
import { comparisonGaps, SECTIONS, unmeasured } from './benchmark-sections';

/** Finished runs, newest first (as the console lists them). */
const done = (runs: BenchmarkRunView[]) => runs.filter((r) => r.status === 'done');

const STATUS_WORDS: Record<BenchmarkRunView['status'], string> = {
  pending: 'Waiting for the agent',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
};

const sectionName = (key: string) => SECTIONS.find((s) => s.key === key)?.name ?? key;

/** A figure with its unit: `412 MB/s`, `0.848 ms`, `2,500 IOPS`. */
const measured = (f: BenchmarkFigure, v: number | null) => withUnit(v, f.unit);

/** How a figure scores: `0 at 20 MB/s, 100 at 2,000 MB/s (log)`. */
const scaleText = (f: BenchmarkFigure) =>
  `0 at ${withUnit(f.zero, f.unit)}, 100 at ${withUnit(f.full, f.unit)} (${f.scale === 'log' ? 'log' : 'straight line'}), ${figure(100 * f.share)} % of ${sectionName(f.section)}`;

const runFigure = (run: BenchmarkRunView, f: BenchmarkFigure) =>
  run.measurements ? figureValue(run.measurements, f) : null;

function Figures({ run }: { run: BenchmarkRunView }) {
  const m = run.measurements;
  if (!m)
    return (
      <p className="muted small">This run's raw figures were not kept (it ran before they were); its log has them.</p>
    );
  return (
    <table className="table cards-on-mobile figures" aria-label={`Figures of ${run.label}`}>
      <thead>
        <tr>
          <th scope="col">Section</th>
          <th scope="col">Measured</th>
          <th scope="col">Figure</th>
          <th scope="col">Points</th>
          <th scope="col">Scale</th>
        </tr>
      </thead>
      <tbody>
        {BENCHMARK_FIGURES.map((f) => {
          const v = runFigure(run, f);
          return (
            <tr key={f.key}>
              <td data-label="Section">{sectionName(f.section)}</td>
              <td data-label="Measured">{f.what}</td>
              <td data-label="Figure" className="num">
                {v === null
                  ? run.skipped[f.section]
                    ? `not measured: ${run.skipped[f.section]}`
                    : 'not measured'
                  : measured(f, v)}
              </td>
              <td data-label="Points" className="num">
                {v === null ? '—' : `${figure(Math.round(figurePoints(f, v) * 10) / 10)} / 100`}
              </td>
              <td data-label="Scale" className="muted small">
                {scaleText(f)}
              </td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function Run({ run }: { run: BenchmarkRunView }) {
  return (
    <li className="run" data-run={run.id}>
      <div className="run-head">
        <strong>{run.label}</strong>
        <span className={`pill pill-${run.status}`}>{STATUS_WORDS[run.status] ?? run.status}</span>
        {run.status === 'done' ? (
          <span className={`pill ${run.verified ? 'pill-ok' : 'pill-warn'}`}>
            {run.verified ? 'Verified' : 'Not verified'}
            {unmeasured(run).length > 0 ? `, ${unmeasured(run).join(' and ')} not measured` : ''}
          </span>
        ) : null}
        <span className="muted small">{dateTime(run.finished_at ?? run.started_at ?? run.created_at)}</span>
      </div>
      {run.status === 'done' ? (
        <>
          <dl className="tiles compact">
            {SECTIONS.map(({ key, name }) => (
              <div key={key}>
                <dt>{name}</dt>
                <dd>
                  {run.scores[key] === null ? '—' : figure(run.scores[key])} <span className="muted small">/ 100</span>
                </dd>
              </div>
            ))}
          </dl>
          <details>
            <summary>Figures and scales</summary>
            <Figures run={run} />
          </details>
        </>
      ) : null}
      {run.error ? <p className="field-error">{run.error}</p> : null}
      {run.checks.length > 0 ? (
        <details>
          <summary>Verification checks</summary>
          <ul className="checks">
            {run.checks.map((c) => (
              <li key={c.name} className={c.skipped ? 'skipped' : c.ok ? 'ok' : 'bad'}>
                <span aria-hidden="true">{c.skipped ? '–' : c.ok ? '✓' : '✗'}</span> <strong>{c.name}</strong>
                <span className="visually-hidden">{c.skipped ? ' not checked' : c.ok ? ' passed' : ' failed'}</span>:{' '}
                {c.detail}
              </li>
            ))}
          </ul>
        </details>
      ) : null}
      {run.log ? (
        <details>
          <summary>Log</summary>
          <pre className="log">{run.log}</pre>
        </details>
      ) : null}
    </li>
  );
}

/** Whether a change is for the better: a higher figure is, except where a smaller one scores more. */
function verdict(f: BenchmarkFigure | null, a: number | null, b: number | null): string {
  if (a === null || b === null || a === b) return '';
  const higherBetter = f === null || f.scale === 'log';
  return b > a === higherBetter ? 'better' : 'worse';
}

const runOptions = (runs: BenchmarkRunView[]) =>
  runs.map((r) => (
    <option key={r.id} value={r.id}>
      {r.label} · {dateTime(r.finished_at)}
    </option>
  ));

/** Two finished runs of this server side by side, with the change of every score and figure in %. */
function Compare({ runs }: { runs: BenchmarkRunView[] }) {
  const [ids, setIds] = useState<[number, number]>([runs[1]!.id, runs[0]!.id]);
  const a = runs.find((r) => r.id === ids[0]) ?? runs[1]!;
  const b = runs.find((r) => r.id === ids[1]) ?? runs[0]!;
  const gaps = comparisonGaps(a, b);
  const rows: { key: string; name: string; a: string; b: string; diff: string; verdict: string }[] = [
    ...SECTIONS.map(({ key, name }) => ({
      key,
      name: `${name} score (of 100)`,
      a: a.scores[key] === null ? '—' : figure(a.scores[key]),
      b: b.scores[key] === null ? '—' : figure(b.scores[key]),
      diff: key === 'total' && gaps.length > 0 ? 'not comparable' : change(a.scores[key], b.scores[key]),
      verdict: key === 'total' && gaps.length > 0 ? '' : verdict(null, a.scores[key], b.scores[key]),
    })),
    ...BENCHMARK_FIGURES.map((f) => {
      const x = runFigure(a, f);
      const y = runFigure(b, f);
      return {
        key: f.key,
        name: `${sectionName(f.section)}: ${f.what}`,
        a: measured(f, x),
        b: measured(f, y),
        diff: change(x, y),
        verdict: verdict(f, x, y),
      };
    }),
  ];
  return (
    <section className="compare" aria-labelledby="compare-title">
      <h3 id="compare-title">Compare two runs</h3>
      <div className="inline-form">
        <SelectField label="Before" value={a.id} onChange={(e) => setIds([Number(e.target.value), ids[1]])}>
          {runOptions(runs)}
        </SelectField>
        <SelectField label="After" value={b.id} onChange={(e) => setIds([ids[0], Number(e.target.value)])}>
          {runOptions(runs)}
        </SelectField>
      </div>
      <table className="table cards-on-mobile" aria-label="Benchmark comparison">
        <thead>
          <tr>
            <th scope="col">Figure</th>
            <th scope="col">{a.label}</th>
            <th scope="col">{b.label}</th>
            <th scope="col">Change</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key}>
              <th scope="row">{r.name}</th>
              <td data-label={a.label} className="num">
                {r.a}
              </td>
              <td data-label={b.label} className="num">
                {r.b}
              </td>
              <td data-label="Change" className={`num ${r.verdict}`}>
                {r.diff}
                {r.verdict ? <span className="muted small"> {r.verdict}</span> : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {gaps.length > 0 ? (
        <p className="note note-warn" data-testid="compare-caveat">
          The totals are not compared: {gaps.join('; ')}, so each total adds up different sections. Compare the sections
          both runs measured.
        </p>
      ) : null}
      <p className="muted small">
        Change is the after figure's difference from the before figure, in % of the before figure. For the round trip,
        spread and steal a smaller figure is better.
      </p>
    </section>
  );
}

export function BenchmarksPanel({ serverId }: { serverId: number }) {
  const query = useBenchmarks(serverId);
  const mutation = useRunBenchmark(serverId);
  const [label, setLabel] = useState('');
  const [labelError, setLabelError] = useState<string | undefined>();
  const unavailable = query.error instanceof ApiError && query.error.status === 404;
  const active = query.data?.runs.some((r) => r.status === 'pending' || r.status === 'running') ?? false;
  // Benchmarks come with some plans only (docs/decisions.md, "Plans that tell the truth"); the console says so too.
  const productId = useServer(serverId).data?.server.product_id;
  const product = useProducts().data?.find((p) => p.id === productId);
  const notInPlan = product !== undefined && !product.includes.includes('benchmarks');
  const plans = (useCatalog().data ?? []).filter((i) => i.includes.includes('benchmarks')).map((i) => i.name);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkRunBenchmark({
      label: label || `Run ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`,
    });
    if (!checked.ok) return setLabelError(checked.errors.label);
    setLabelError(undefined);
    void mutation.run({ id: serverId, label: checked.value.label }).then((out) => {
      if (out) setLabel('');
    });
  };

  const why = unavailable
    ? 'Benchmarks are not available on this console yet.'
    : notInPlan
      ? `Benchmarks are not in the ${product.name} plan. Add a ${plans.join(' or ') || 'plan with benchmarks'} product under Settings → Products and billing and move this server to it.`
      : active
        ? 'A benchmark is already waiting or running on this server.'
        : null;

  return (
    <section className="card" aria-labelledby="bench-title">
      <h2 id="bench-title">Benchmarks</h2>
      <form className="inline-form" onSubmit={submit} noValidate>
        <TextField
          label="Label"
          placeholder="After the upgrade"
          value={label}
          error={labelError}
          onChange={(e) => setLabel(e.target.value)}
          disabled={why !== null}
        />
        <Button
          type="submit"
          variant="primary"
          busy={mutation.pending}
          disabled={why !== null}
          aria-describedby={why ? 'bench-why' : undefined}
        >
          Run benchmark
        </Button>
      </form>
      {why ? (
        <p className="hint" id="bench-why">
          {why}
        </p>
      ) : null}
      <ErrorNote message={mutation.error} />
      {mutation.data ? <StatusLine>Benchmark queued. The agent picks it up at its next check-in.</StatusLine> : null}
      {unavailable ? null : (
        <QueryView query={query} what="Loading benchmarks">
          {(data) =>
            data.runs.length === 0 ? (
              <Empty>
                <p>No benchmark runs yet.</p>
              </Empty>
            ) : (
              <>
                {done(data.runs).length >= 2 ? <Compare runs={done(data.runs)} /> : null}
                <ul className="runs">
                  {data.runs.map((r) => (
                    <Run key={r.id} run={r} />
                  ))}
                </ul>
              </>
            )
          }
        </QueryView>
      )}
    </section>
  );
}
