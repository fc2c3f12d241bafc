import { useState } from 'react';
import { ConfirmButton } from '../../../components/buttons';
import { ErrorNote, QueryView, StatusLine } from '../../../components/states';
import { dateTime, timeAgo } from '../../../lib/format';
import { useSessions } from '../api/get-sessions';
import { useRevokeOtherSessions, useRevokeSession } from '../api/revoke-session';

/** The browsers signed in to this account: device, address, when; sign one out, or all the others. */
export function SessionsPanel() {
  const query = useSessions();
  const revoke = useRevokeSession();
  const others = useRevokeOtherSessions();
  const [status, setStatus] = useState('');

  return (
    <div className="stack">
      <ErrorNote message={revoke.error ?? others.error} />
      {status ? <StatusLine>{status}</StatusLine> : null}
      <QueryView query={query} what="Loading sessions">
        {(sessions) => (
          <>
            <table className="table cards-on-mobile" aria-label="Active sessions">
              <thead>
                <tr>
                  <th scope="col">Device</th>
                  <th scope="col">Address</th>
                  <th scope="col">Signed in</th>
                  <th scope="col">Last seen</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {sessions.map((s) => (
                  <tr key={s.id}>
                    <td data-label="Device">
                      {s.device}
                      {s.current ? (
                        <>
                          {' '}
                          <span className="pill pill-ok">this session</span>
                        </>
                      ) : null}
                    </td>
                    <td data-label="Address">
                      <code>{s.ip ?? 'unknown'}</code>
                    </td>
                    <td data-label="Signed in">{dateTime(s.created_at)}</td>
                    <td data-label="Last seen">{s.current ? 'now' : timeAgo(s.last_seen_at)}</td>
                    <td>
                      {s.current ? null : (
                        <ConfirmButton
                          small
                          label="Sign out"
                          confirmLabel={`Sign out ${s.device}`}
                          busy={revoke.pending}
                          onConfirm={() =>
                            void revoke
                              .run(s.id)
                              .then((out) => out !== undefined && setStatus(`${s.device} was signed out.`))
                          }
                        />
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            {sessions.length > 1 ? (
              <div>
                <ConfirmButton
                  label="Sign out everywhere else"
                  confirmLabel={`Yes, sign out ${sessions.length - 1} other ${sessions.length === 2 ? 'session' : 'sessions'}`}
                  busy={others.pending}
                  onConfirm={() =>
                    void others
                      .run(undefined)
                      .then(
                        (out) =>
                          out !== undefined &&
                          setStatus(
                            `Signed out everywhere else (${out.sessions_ended} ${out.sessions_ended === 1 ? 'session' : 'sessions'}).`,
                          ),
                      )
                  }
                />
              </div>
            ) : (
              <p className="muted small">This is the only browser signed in to your account.</p>
            )}
          </>
        )}
      </QueryView>
    </div>
  );
}
