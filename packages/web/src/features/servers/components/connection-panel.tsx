import type { DashboardServer } from '@palisade/protocol';
import { type FormEvent, useEffect, useState } from 'react';
import { Button } from '../../../components/buttons';
import { SelectField } from '../../../components/field';
import { ErrorNote, StatusLine } from '../../../components/states';
import { type ConnectionMode, useSetConnection } from '../api/set-connection';

const MODES: Record<ConnectionMode, { label: string; detail: string }> = {
  direct: {
    label: 'Direct: the console calls the agent at its address',
    detail: 'The agent must be reachable from the console on its metrics port.',
  },
  outbound: {
    label: 'Outbound link: the agent keeps a link open to the console',
    detail:
      'For an agent behind NAT or a firewall. Calls go only through the link the agent opens (after it proves it holds its key); while the link is down, calls fail at once.',
  },
};

/**
 * How the console reaches the server (docs/fleet.md, "Outbound link"). Only the account switches it
 * (control.edit, written to the audit log): an agent's link never switches a direct server.
 */
export function ConnectionPanel({
  serverId,
  connection,
}: {
  serverId: number;
  connection: DashboardServer['connection'];
}) {
  const [mode, setMode] = useState<ConnectionMode>(connection.mode);
  const [saved, setSaved] = useState<ConnectionMode | null>(null);
  const update = useSetConnection(serverId);
  // A change made elsewhere (another tab, the API) shows here once the server is read again.
  useEffect(() => setMode(connection.mode), [connection.mode]);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(null);
    void update.run({ id: serverId, mode }).then((answer) => {
      if (answer) setSaved(mode);
    });
  };

  return (
    <section className="card" aria-labelledby="connection-title">
      <h2 id="connection-title">Connection</h2>
      <p className="muted">
        Now: <strong>{connection.mode === 'direct' ? 'direct' : 'outbound link'}</strong>.{' '}
        {MODES[connection.mode].detail}
      </p>
      <form className="inline-form" onSubmit={submit} noValidate>
        <SelectField
          label="How the console reaches this server"
          value={mode}
          hint={MODES[mode].detail}
          onChange={(e) => setMode(e.target.value as ConnectionMode)}
        >
          {(Object.keys(MODES) as ConnectionMode[]).map((m) => (
            <option key={m} value={m}>
              {MODES[m].label}
            </option>
          ))}
        </SelectField>
        <Button type="submit" variant="primary" busy={update.pending} disabled={mode === connection.mode}>
          Save
        </Button>
      </form>
      <ErrorNote message={update.error} />
      {saved ? (
        <StatusLine>
          Saved: the console now reaches the server {saved === 'direct' ? 'directly' : 'through its link'}.
        </StatusLine>
      ) : null}
    </section>
  );
}
