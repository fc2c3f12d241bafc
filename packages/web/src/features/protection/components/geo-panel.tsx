import type { GeoAnswer } from '@palisade/protocol/control-schemas';
import { type FormEvent, useEffect, useState } from 'react';
import { Button } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { ErrorNote, StatusLine } from '../../../components/states';
import { useChangeControl } from '../api/change-control';
import { useControl } from '../api/get-control';
import { ControlState, editProps, writeError } from './control-state';

type GeoMode = Pick<GeoAnswer, 'mode' | 'countries'>;

const MODES = {
  off: 'Off: countries do not matter',
  allow: 'Allow only these countries',
  deny: 'Block these countries',
};

function GeoForm({ serverId, geo, canEdit }: { serverId: number; geo: GeoMode; canEdit: boolean }) {
  const change = useChangeControl(serverId, ['geo/mode']);
  const [mode, setMode] = useState(geo.mode);
  const [countries, setCountries] = useState(geo.countries.join(', '));
  const [error, setError] = useState<string | undefined>();
  const [status, setStatus] = useState('');
  useEffect(() => {
    setMode(geo.mode);
    setCountries(geo.countries.join(', '));
  }, [geo]);

  const save = async (event: FormEvent) => {
    event.preventDefault();
    const list = countries
      .split(/[\s,]+/)
      .map((c) => c.trim().toUpperCase())
      .filter(Boolean);
    const bad = list.filter((c) => !/^[A-Z]{2}$/.test(c));
    if (bad.length) return setError(`Use two-letter country codes (e.g. DE, US). Not valid: ${bad.join(', ')}`);
    setError(undefined);
    const out = await change.run({ method: 'POST', path: 'geo/mode', body: { mode, countries: list } });
    if (out !== undefined) setStatus('Geo rules saved.');
  };

  return (
    <>
      <form className="form" onSubmit={(e) => void save(e)} noValidate>
        <SelectField
          label="Mode"
          value={mode}
          onChange={(e) => setMode(e.target.value as GeoMode['mode'])}
          {...editProps(canEdit)}
        >
          {Object.entries(MODES).map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </SelectField>
        <TextField
          label="Countries"
          hint="Two-letter codes, separated by commas."
          value={countries}
          error={error}
          onChange={(e) => setCountries(e.target.value)}
          {...editProps(canEdit)}
        />
        <Button type="submit" variant="primary" busy={change.pending} {...editProps(canEdit)}>
          Save geo rules
        </Button>
      </form>
      {geo.countries.length > 0 ? (
        <fieldset className="chips">
          <legend>Turn one country off or on</legend>
          {geo.countries.map((c) => (
            <Button
              key={c}
              small
              onClick={() =>
                void change
                  .run({ method: 'POST', path: 'geo/toggle', body: { country: c } })
                  .then((out) => out !== undefined && setStatus(`${c} toggled.`))
              }
              {...editProps(canEdit)}
            >
              {c}
            </Button>
          ))}
        </fieldset>
      ) : null}
      <ErrorNote message={writeError(change.error)} />
      {status ? <StatusLine>{status}</StatusLine> : null}
    </>
  );
}

export function GeoPanel({ serverId, canEdit }: { serverId: number; canEdit: boolean }) {
  const query = useControl(serverId, 'geo/mode');
  return (
    <section className="card" aria-labelledby="geo-title">
      <h3 id="geo-title">Countries</h3>
      <ControlState query={query} what="Loading geo rules">
        {(body) => <GeoForm serverId={serverId} canEdit={canEdit} geo={body} />}
      </ControlState>
    </section>
  );
}
