import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { Empty, ErrorNote, QueryView, StatusLine } from '../../../components/states';
import { ApiError } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import type { BenchmarkRunView } from '../../../lib/wire';
import { useBenchmarks } from '../api/get-benchmarks';
import { checkRunBenchmark, useRunBenchmark } from '../api/run-benchmark';

const STATUS_WORDS: Record<BenchmarkRunView['status'], string> = {
  pending: 'Waiting for the agent',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
};

function score(v: number | null) {
  return v === null ? '—' : v.toFixed(1);
}

function Run({ run }: { run: BenchmarkRunView }) {
  return (
    <li className="run">
      <div className="run-head">
        <strong>{run.label}</strong>
        <span className={`pill pill-${run.status}`}>{STATUS_WORDS[run.status] ?? run.status}</span>
        {run.status === 'done' ? (
          <span className={`pill ${run.verified ? 'pill-ok' : 'pill-warn'}`}>
            {run.verified ? 'Verified' : 'Not verified'}
          </span>
        ) : null}
        <span className="muted small">{dateTime(run.finished_at ?? run.started_at ?? run.created_at)}</span>
      </div>
      {run.status === 'done' ? (
        <dl className="tiles compact">
          {(['total', 'cpu', 'disk', 'network', 'stability'] as const).map((k) => (
            <div key={k}>
              <dt>{k === 'total' ? 'Total' : k[0]!.toUpperCase() + k.slice(1)}</dt>
              <dd>{score(run.scores[k])}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {run.error ? <p className="field-error">{run.error}</p> : null}
      {run.checks.length > 0 ? (
        <details>
          <summary>Verification checks</summary>
          <ul className="checks">
            {run.checks.map((c) => (
              <li key={c.name} className={c.ok ? 'ok' : 'bad'}>
                <span aria-hidden="true">{c.ok ? '✓' : '✗'}</span> <strong>{c.name}</strong>
                <span className="visually-hidden">{c.ok ? ' passed' : ' failed'}</span>: {c.detail}
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

export function BenchmarksPanel({ serverId }: { serverId: number }) {
  const query = useBenchmarks(serverId);
  const mutation = useRunBenchmark(serverId);
  const [label, setLabel] = useState('');
  const [labelError, setLabelError] = useState<string | undefined>();
  const unavailable = query.error instanceof ApiError && query.error.status === 404;
  const active = query.data?.runs.some((r) => r.status === 'pending' || r.status === 'running') ?? false;

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
              <ul className="runs">
                {data.runs.map((r) => (
                  <Run key={r.id} run={r} />
                ))}
              </ul>
            )
          }
        </QueryView>
      )}
    </section>
  );
}
