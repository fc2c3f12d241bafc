import type { FleetAddress, FleetApplication } from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import { errorText } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import { liftEverywhere, lookUpFleetAddress } from '../api/fleet';
import { whyWords } from './lists-panel';

function stateWords(s: FleetApplication): string {
  if (s.want === 'absent') return s.state === 'applied' ? 'lifted' : `lifting${s.reason ? `: ${s.reason}` : ''}`;
  if (s.state === 'applied') return `blocks it since ${dateTime(s.applied_at)}`;
  if (s.state === 'failed') return `failed: ${s.reason ?? 'refused'}`;
  return `pending${s.reason ? `: ${s.reason}` : ''}${s.next_attempt_at ? ` (next try ${dateTime(s.next_attempt_at)})` : ''}`;
}

/** For any address: which servers block it through the fleet, since when, why, and one action to lift it everywhere. */
export function AddressPanel() {
  const [ip, setIp] = useState('');
  const [answer, setAnswer] = useState<FleetAddress | null>(null);
  const [fieldError, setFieldError] = useState<string | undefined>();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [lifting, setLifting] = useState(false);
  const [lifted, setLifted] = useState<string | null>(null);

  const look = async (text: string) => {
    setError(null);
    setBusy(true);
    try {
      setAnswer(await lookUpFleetAddress(text));
    } catch (err) {
      setAnswer(null);
      if (/^ip: /.test(errorText(err))) setFieldError(errorText(err).slice(4));
      else setError(errorText(err));
    } finally {
      setBusy(false);
    }
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const text = ip.trim();
    if (!text) return setFieldError('Type one address, e.g. 203.0.113.7.');
    setFieldError(undefined);
    setLifted(null);
    void look(text);
  };

  const lift = async () => {
    if (!answer) return;
    setLifting(true);
    try {
      const { lifted: n, still_held: still } = await liftEverywhere(answer.ip);
      const waiting = [...new Set(still.map((s) => `${s.server_name} (${s.state}${s.reason ? `: ${s.reason}` : ''})`))];
      setLifted(
        `Lifted ${n} fleet entr${n === 1 ? 'y' : 'ies'}; ${
          waiting.length === 0 ? 'every server dropped it.' : `not dropped yet on ${waiting.join(', ')}.`
        }`,
      );
      await look(answer.ip);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setLifting(false);
    }
  };

  const blocking = answer?.entries.filter((e) => e.list === 'black') ?? [];
  return (
    <section className="card" aria-labelledby="fleet-address-title">
      <h2 id="fleet-address-title">Which servers block this address?</h2>
      <form className="inline-form" onSubmit={submit} noValidate aria-label="Look up an address in the fleet">
        <TextField
          label="IP address"
          value={ip}
          error={fieldError}
          placeholder="203.0.113.7"
          onChange={(e) => setIp(e.target.value)}
        />
        <Button type="submit" variant="primary" busy={busy}>
          Look up
        </Button>
      </form>
      <ErrorNote message={error} />
      {lifted ? (
        <p className="note note-ok" role="status">
          {lifted}
        </p>
      ) : null}
      {answer ? (
        <div className="stack" data-testid="fleet-address">
          {answer.entries.length === 0 ? (
            <p role="status">
              <code className="address">{answer.ip}</code> is on no fleet list.
            </p>
          ) : (
            answer.entries.map((e) => (
              <div key={e.id} className="stack">
                <p role="status">
                  <code className="address">{e.address}</code>: {e.list === 'black' ? 'blocked' : 'allowed'} because of{' '}
                  {whyWords(e)}, since {dateTime(e.created_at)}
                  {e.expires_at ? `, until ${dateTime(e.expires_at)}` : ''}.
                </p>
                <div className="table-scroll">
                  <table className="table" aria-label={`Servers for fleet entry ${e.id}`}>
                    <thead>
                      <tr>
                        <th scope="col">Server</th>
                        <th scope="col">State</th>
                      </tr>
                    </thead>
                    <tbody>
                      {e.origin.server_id !== null ? (
                        <tr>
                          <td>{e.origin.server_name}</td>
                          <td>first server: its own ban</td>
                        </tr>
                      ) : null}
                      {e.servers
                        .filter((s) => s.server_id !== e.origin.server_id || s.want === 'present')
                        .map((s) => (
                          <tr key={s.server_id}>
                            <td>{s.server_name}</td>
                            <td className={s.state === 'failed' ? 'error-text' : undefined}>{stateWords(s)}</td>
                          </tr>
                        ))}
                    </tbody>
                  </table>
                </div>
              </div>
            ))
          )}
          {blocking.length > 0 ? (
            <ConfirmButton
              label="Lift everywhere"
              confirmLabel={`Lift ${answer.ip} on every server`}
              busy={lifting}
              onConfirm={() => void lift()}
            />
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
