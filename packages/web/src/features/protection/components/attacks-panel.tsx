import { useState } from 'react';
import { Button } from '../../../components/buttons';
import { Empty, ErrorNote, StatusLine } from '../../../components/states';
import { bitsPerSecond, dateTime, withUnit } from '../../../lib/format';
import { useChangeControl } from '../api/change-control';
import { useControl, useControlList } from '../api/get-control';
import { ControlState, editProps, writeError } from './control-state';

function Progress({ serverId }: { serverId: number }) {
  const query = useControl(serverId, 'attacks/blacklist/status', { intervalMs: 1000 });
  const s = query.data;
  if (!s) return null;
  const { done, state } = s;
  return (
    <div className="progress-box" role="status" aria-live="polite">
      {s.total ? (
        <>
          <label htmlFor="blacklist-progress">
            Blacklisting sources: {done} of {s.total} ({state})
          </label>
          <progress id="blacklist-progress" max={s.total} value={done} />
        </>
      ) : (
        <span>Blacklisting sources: {state}</span>
      )}
      {s.error ? <p className="field-error">{s.error}</p> : null}
    </div>
  );
}

/** Detected attacks, with "blacklist sources" and its progress. */
export function AttacksPanel({ serverId, canEdit }: { serverId: number; canEdit: boolean }) {
  const query = useControlList(serverId, 'attacks', { intervalMs: 10_000 });
  const change = useChangeControl(serverId, ['attacks', 'attacks/blacklist/status', 'blacklist']);
  const [started, setStarted] = useState(false);

  return (
    <section className="card" aria-labelledby="attacks-title">
      <h2 id="attacks-title">Attacks</h2>
      <ControlState query={query} what="Loading attacks">
        {(attacks) => {
          return attacks.length === 0 ? (
            <Empty>
              <p>No attacks detected.</p>
            </Empty>
          ) : (
            <ul className="runs">
              {attacks.map((a) => (
                <li key={a.id} className="run">
                  <div className="run-head">
                    <strong>{a.kind}</strong>
                    <span className={`pill ${a.ended_at ? 'pill-off' : 'pill-bad'}`}>
                      {a.ended_at ? 'Ended' : 'Active'}
                    </span>
                    <span className="muted small">
                      {dateTime(a.started_at)}
                      {a.ended_at ? ` – ${dateTime(a.ended_at)}` : ''}
                    </span>
                  </div>
                  <p className="small">
                    Peak {withUnit(a.peak_pps, 'packets/s')}, {bitsPerSecond(a.peak_bps)} · {a.sources?.length ?? 0}{' '}
                    sources
                    {a.action ? ` · ${a.action}` : ''}
                  </p>
                  {a.sources && a.sources.length > 0 ? (
                    <details>
                      <summary>Sources</summary>
                      <ul className="plain-list small">
                        {a.sources.slice(0, 50).map((s) => (
                          <li key={s.ip}>
                            <code>{s.ip}</code> {s.hits} hits
                          </li>
                        ))}
                      </ul>
                    </details>
                  ) : null}
                  <Button
                    small
                    busy={change.pending}
                    onClick={() =>
                      void change
                        .run({ method: 'POST', path: 'attacks/blacklist', body: { attack_id: a.id } })
                        .then((out) => out !== undefined && setStarted(true))
                    }
                    {...editProps(canEdit)}
                  >
                    Blacklist sources
                  </Button>
                </li>
              ))}
            </ul>
          );
        }}
      </ControlState>
      <ErrorNote message={writeError(change.error)} />
      {started ? (
        <>
          <StatusLine>Blacklisting started.</StatusLine>
          <Progress serverId={serverId} />
        </>
      ) : null}
    </section>
  );
}
