import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { Empty, ErrorNote, StatusLine } from '../../../components/states';
import type { Errors } from '../../../lib/schema';
import { type BlockPatternValues, checkBlockPattern, toBlockPattern } from '../api/add-block-pattern';
import { useChangeControl } from '../api/change-control';
import { useControlList } from '../api/get-control';
import { ControlState, editProps, writeError } from './control-state';

const EMPTY: BlockPatternValues = { name: '', file: '', regex: '', threshold: '5', window_s: '60', ban_s: '3600' };

/** Log patterns: so many matching lines from one address within the window ban it for a while. */
export function PatternsPanel({ serverId, canEdit }: { serverId: number; canEdit: boolean }) {
  const query = useControlList(serverId, 'block-pattern');
  const change = useChangeControl(serverId, ['block-pattern']);
  const [values, setValues] = useState<BlockPatternValues>(EMPTY);
  const [errors, setErrors] = useState<Errors<keyof BlockPatternValues>>({});
  const [status, setStatus] = useState('');
  const set = (k: keyof BlockPatternValues) => (e: { target: { value: string } }) =>
    setValues({ ...values, [k]: e.target.value });

  const add = async (event: FormEvent) => {
    event.preventDefault();
    const checked = checkBlockPattern(values);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    const out = await change.run({ method: 'POST', path: 'block-pattern', body: toBlockPattern(checked.value) });
    if (out !== undefined) {
      setStatus(`Pattern ${values.name} added.`);
      setValues(EMPTY);
    }
  };

  return (
    <section className="card" aria-labelledby="patterns-title">
      <h3 id="patterns-title">Block patterns</h3>
      <ControlState query={query} what="Loading patterns">
        {(patterns) => {
          return (
            <>
              {patterns.length === 0 ? (
                <Empty>
                  <p>No patterns.</p>
                </Empty>
              ) : (
                <ul className="plain-list">
                  {patterns.map((p) => (
                    <li key={p.name}>
                      <strong>{p.name}</strong> <code>{p.file}</code>
                      <br />
                      <code className="wrap">{p.regex}</code>
                      <br />
                      <span className="muted small">
                        {p.threshold} hits in {p.window_s} s → banned {p.ban_s} s
                      </span>{' '}
                      <Button
                        small
                        variant="danger"
                        aria-label={`Remove pattern ${p.name}`}
                        onClick={() =>
                          void change.run({ method: 'DELETE', path: 'block-pattern', query: { name: p.name } })
                        }
                        {...editProps(canEdit)}
                      >
                        Remove
                      </Button>
                    </li>
                  ))}
                </ul>
              )}
              <details>
                <summary>Add a pattern</summary>
                <form className="form" onSubmit={(e) => void add(e)} noValidate>
                  <TextField
                    label="Name"
                    value={values.name}
                    error={errors.name}
                    onChange={set('name')}
                    {...editProps(canEdit)}
                  />
                  <TextField
                    label="Log file"
                    placeholder="/var/log/auth.log"
                    value={values.file}
                    error={errors.file}
                    onChange={set('file')}
                    {...editProps(canEdit)}
                  />
                  <TextField
                    label="Regular expression"
                    placeholder="Failed password .* from (?<ip>\S+)"
                    value={values.regex}
                    error={errors.regex}
                    onChange={set('regex')}
                    {...editProps(canEdit)}
                  />
                  <div className="row">
                    <TextField
                      label="Hits"
                      inputMode="numeric"
                      value={values.threshold}
                      error={errors.threshold}
                      onChange={set('threshold')}
                      {...editProps(canEdit)}
                    />
                    <TextField
                      label="Window (s)"
                      inputMode="numeric"
                      value={values.window_s}
                      error={errors.window_s}
                      onChange={set('window_s')}
                      {...editProps(canEdit)}
                    />
                    <TextField
                      label="Ban (s)"
                      inputMode="numeric"
                      value={values.ban_s}
                      error={errors.ban_s}
                      onChange={set('ban_s')}
                      {...editProps(canEdit)}
                    />
                  </div>
                  <Button type="submit" variant="primary" busy={change.pending} {...editProps(canEdit)}>
                    Add pattern
                  </Button>
                </form>
              </details>
              <ErrorNote message={writeError(change.error)} />
              {status ? <StatusLine>{status}</StatusLine> : null}
            </>
          );
        }}
      </ControlState>
    </section>
  );
}
