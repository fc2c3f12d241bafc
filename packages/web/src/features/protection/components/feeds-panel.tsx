import { useState } from 'react';
import { Button } from '../../../components/buttons';
import { Empty, ErrorNote, StatusLine } from '../../../components/states';
import { dateTime } from '../../../lib/format';
import { useChangeControl } from '../api/change-control';
import { useControl } from '../api/get-control';
import { ControlState, editProps, writeError } from './control-state';
import { FeedEntries } from './feed-entries';

/** Blocklist feeds: on or off (all, or one), fetch now, and each feed's entries page by page. */
export function FeedsPanel({ serverId, canEdit }: { serverId: number; canEdit: boolean }) {
  const feeds = useControl(serverId, 'autofetch/toggle');
  // A fetch changes the feed pages too (their keys start with the blacklist's).
  const change = useChangeControl(serverId, ['autofetch/toggle', 'config', 'blacklist']);
  const [status, setStatus] = useState('');
  const [open, setOpen] = useState<string | null>(null);

  return (
    <section className="card" aria-labelledby="feeds-title">
      <h3 id="feeds-title">Blocklist feeds</h3>
      <ControlState query={feeds} what="Loading feeds">
        {(body) => (
          <>
            <p>
              Feeds are <strong>{body.enabled ? 'on' : 'off'}</strong>
              {body.enabled ? ': the enabled feeds below are blocked.' : ': no feed blocks anything.'}
            </p>
            <div className="actions">
              <Button
                onClick={() =>
                  void change
                    .run({ method: 'POST', path: 'autofetch/toggle', body: { enabled: !body.enabled } })
                    .then(
                      (out) => out !== undefined && setStatus(body.enabled ? 'Feeds turned off.' : 'Feeds turned on.'),
                    )
                }
                {...editProps(canEdit)}
              >
                {body.enabled ? 'Turn feeds off' : 'Turn feeds on'}
              </Button>
              <Button
                busy={change.pending}
                onClick={() =>
                  void change
                    .run({ method: 'POST', path: 'autofetch/fetch-now' })
                    .then((out) => out !== undefined && setStatus('Feeds fetched.'))
                }
                {...editProps(canEdit)}
              >
                Fetch now
              </Button>
            </div>
            {body.feeds.length === 0 ? (
              <Empty>
                <p>No feeds are configured (autofetch.feeds in the agent's config file).</p>
              </Empty>
            ) : (
              <div className="table-scroll">
                <table className="table" aria-label="Feeds">
                  <thead>
                    <tr>
                      <th scope="col">Feed</th>
                      <th scope="col">On</th>
                      <th scope="col">Entries</th>
                      <th scope="col">Last fetched</th>
                      <th scope="col">
                        <span className="visually-hidden">Actions</span>
                      </th>
                    </tr>
                  </thead>
                  <tbody>
                    {body.feeds.map((f) => (
                      <tr key={f.name}>
                        <td>
                          <strong>{f.name}</strong>
                          <br />
                          <span className="muted small url">{f.url}</span>
                          {f.last_error ? <span className="entry-warning">⚠ {f.last_error}</span> : null}
                        </td>
                        <td>{f.enabled ? 'yes' : 'no'}</td>
                        <td className="nowrap">
                          {f.entries.toLocaleString('en')}
                          {f.invalid > 0 ? (
                            <span className="muted small"> ({f.invalid} lines not understood)</span>
                          ) : null}
                        </td>
                        <td className="nowrap">{f.last_ok_at ? dateTime(f.last_ok_at) : 'never'}</td>
                        <td className="nowrap">
                          <Button
                            small
                            aria-expanded={open === f.name}
                            onClick={() => setOpen(open === f.name ? null : f.name)}
                          >
                            {open === f.name ? 'Hide entries' : 'Show entries'}
                          </Button>{' '}
                          <Button
                            small
                            onClick={() =>
                              void change
                                .run({
                                  method: 'POST',
                                  path: 'autofetch/toggle',
                                  body: { feed: f.name, enabled: !f.enabled },
                                })
                                .then(
                                  (out) =>
                                    out !== undefined && setStatus(`${f.name} turned ${f.enabled ? 'off' : 'on'}.`),
                                )
                            }
                            {...editProps(canEdit)}
                          >
                            {f.enabled ? 'Turn off' : 'Turn on'}
                          </Button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
            )}
            {open ? <FeedEntries key={open} serverId={serverId} feed={open} /> : null}
          </>
        )}
      </ControlState>
      <ErrorNote message={writeError(change.error)} />
      {status ? <StatusLine>{status}</StatusLine> : null}
    </section>
  );
}
