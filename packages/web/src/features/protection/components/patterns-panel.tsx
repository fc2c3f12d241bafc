import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { Empty, ErrorNote, StatusLine } from '../../../components/states';
import type { Errors } from '../../../lib/schema';
import { type BlockPatternValues, checkBlockPattern, toBlockPattern } from '../api/add-block-pattern';
import { useChangeControl } from '../api/change-control';
import { offerText, servicesToOffer, useEnableServices } from '../api/enable-found-services';
import { useControl } from '../api/get-control';
import { ControlState, editProps, writeError } from './control-state';

/**
 * Where a pattern reads on that server and whether the agent can read it: `source: auto` resolved
 * there (its file, /var/log/secure, or the journal; docs/protection.md, "Where a pattern reads").
 * An agent before sources sends only `file` and `file_error`.
 */
function SourceNote({
  pattern: p,
}: {
  pattern: { source?: string; reads?: string; source_error?: string | null; file_error: string | null };
}) {
  const problem = p.source_error ?? p.file_error;
  const how = p.source === 'auto' ? 'chosen by source auto' : p.source === 'journal' ? 'the journal' : 'file';
  return (
    <span className="muted small">
      ({how}; {problem ? <span className="entry-warning">⚠ cannot read: {problem}</span> : 'readable'})
    </span>
  );
}

const EMPTY: BlockPatternValues = {
  name: '',
  file: '',
  regex: '',
  threshold: '5',
  window_s: '60',
  ban_s: '3600',
  source: 'file',
  journal: '',
};

/** Log patterns: so many matching lines from one address within the window ban it for a while. */
export function PatternsPanel({ serverId, canEdit }: { serverId: number; canEdit: boolean }) {
  const query = useControl(serverId, 'block-pattern');
  const change = useChangeControl(serverId, ['block-pattern']);
  const enable = useEnableServices(serverId);
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
        {(answer) => {
          const patterns = answer.patterns;
          const offers = servicesToOffer(answer);
          return (
            <>
              {offers.length > 0 ? (
                <div className="note note-warn" role="note" aria-label="Services found on this server">
                  <p>
                    {offerText(offers)}{' '}
                    <span className="muted small">
                      ({offers.map((o) => `${o.service}: ${o.found} → ${o.patterns.join(', ')}`).join('; ')})
                    </span>
                  </p>
                  <Button
                    variant="primary"
                    busy={enable.pending}
                    onClick={() =>
                      void enable.run(offers).then((names) => {
                        if (names) setStatus(`Enabled ${names.join(', ')}.`);
                      })
                    }
                    {...editProps(canEdit)}
                  >
                    Enable their patterns
                  </Button>
                </div>
              ) : null}
              {patterns.length === 0 ? (
                <Empty>
                  <p>No patterns.</p>
                </Empty>
              ) : (
                <ul className="plain-list">
                  {patterns.map((p) => (
                    <li key={p.name}>
                      <strong>{p.name}</strong> <code>{p.reads ?? p.file}</code> <SourceNote pattern={p} />
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
                  <div className="row">
                    <SelectField
                      label="Source"
                      value={values.source}
                      error={errors.source}
                      onChange={set('source')}
                      {...editProps(canEdit)}
                    >
                      <option value="file">The log file</option>
                      <option value="journal">The systemd journal</option>
                      <option value="auto">Auto: the file if readable, else the journal</option>
                    </SelectField>
                    <TextField
                      label="Journal identifiers or units"
                      placeholder="sshd, ssh.service"
                      hint="For the journal and auto: syslog identifiers or units, separated by commas."
                      value={values.journal}
                      error={errors.journal}
                      onChange={set('journal')}
                      {...editProps(canEdit)}
                    />
                  </div>
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
              <ErrorNote message={writeError(change.error ?? enable.error)} />
              {status ? <StatusLine>{status}</StatusLine> : null}
            </>
          );
        }}
      </ControlState>
    </section>
  );
}
