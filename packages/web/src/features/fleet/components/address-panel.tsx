import type { FleetAddress, FleetApplication } from '@palisade/protocol';
import { type FormEvent, useMemo, useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { PageNav } from '../../../components/pager';
import { ErrorNote } from '../../../components/states';
import { errorText } from '../../../lib/api';
import { dateTime } from '../../../lib/format';
import { compareNames } from '../../../lib/names';
import { liftEverywhere, lookUpFleetAddress } from '../api/fleet';
import { whyWords } from './lists-panel';

function stateWords(s: FleetApplication): string {
  if (s.want === 'absent') return s.state === 'applied' ? 'lifted' : `lifting${s.reason ? `: ${s.reason}` : ''}`;
  if (s.state === 'applied') return `blocks it since ${dateTime(s.applied_at)}`;
  if (s.state === 'failed') return `failed: ${s.reason ?? 'refused'}`;
  return `pending${s.reason ? `: ${s.reason}` : ''}${s.next_attempt_at ? ` (next try ${dateTime(s.next_attempt_at)})` : ''}`;
}

/** What a server is doing with an entry, in one word, for the summary and the filter. */
type Standing = 'blocking' | 'allowing' | 'pending' | 'failed' | 'lifting' | 'lifted';
type AddressEntry = FleetAddress['entries'][number];
function standingOf(s: FleetApplication, list: AddressEntry['list']): Standing {
  if (s.want === 'absent') return s.state === 'applied' ? 'lifted' : 'lifting';
  if (s.state === 'applied') return list === 'black' ? 'blocking' : 'allowing';
  return s.state === 'failed' ? 'failed' : 'pending';
}
const STANDINGS: Standing[] = ['failed', 'pending', 'blocking', 'allowing', 'lifting', 'lifted'];
/** Servers a page in an entry's list: a fleet of 200 stays a short page. */
const SERVERS_PAGE = 25;

/**
 * One entry's servers: counts per state first (each a filter), then the servers, filtered by state
 * and name and paged, failures first.
 */
function EntryServers({ entry }: { entry: AddressEntry }) {
  const [standing, setStanding] = useState<Standing | 'all'>('all');
  const [name, setName] = useState('');
  const [page, setPage] = useState(1);
  const rows = useMemo(
    () =>
      entry.servers
        .filter((s) => s.server_id !== entry.origin.server_id || s.want === 'present')
        .map((s) => ({ ...s, standing: standingOf(s, entry.list) }))
        .sort(
          (a, b) =>
            STANDINGS.indexOf(a.standing) - STANDINGS.indexOf(b.standing) || compareNames(a.server_name, b.server_name),
        ),
    [entry],
  );
  const counts = new Map<Standing, number>();
  for (const r of rows) counts.set(r.standing, (counts.get(r.standing) ?? 0) + 1);
  const needle = name.trim().toLowerCase();
  const shown = rows.filter(
    (r) => (standing === 'all' || r.standing === standing) && (!needle || r.server_name.toLowerCase().includes(needle)),
  );
  const pages = Math.max(1, Math.ceil(shown.length / SERVERS_PAGE));
  const current = Math.min(page, pages);
  const visible = shown.slice((current - 1) * SERVERS_PAGE, current * SERVERS_PAGE);
  const pick = (next: Standing | 'all') => {
    setStanding(next);
    setPage(1);
  };
  return (
    <div className="stack">
      <fieldset className="state-filters filter-group">
        <legend className="visually-hidden">Servers for fleet entry {entry.id} by state</legend>
        <button
          type="button"
          className="filter-chip"
          aria-pressed={standing === 'all'}
          onClick={() => pick('all')}
          data-testid={`entry-${entry.id}-all`}
        >
          All <strong>{rows.length}</strong>
        </button>
        {STANDINGS.filter((st) => counts.has(st)).map((st) => (
          <button
            key={st}
            type="button"
            className={`filter-chip${st === 'failed' ? ' filter-chip-bad' : ''}`}
            aria-pressed={standing === st}
            onClick={() => pick(st)}
            data-testid={`entry-${entry.id}-${st}`}
          >
            {st[0]!.toUpperCase() + st.slice(1)} <strong>{counts.get(st)}</strong>
          </button>
        ))}
      </fieldset>
      {rows.length > SERVERS_PAGE ? (
        <TextField
          label="Server name"
          value={name}
          placeholder="web-1"
          onChange={(e) => {
            setName(e.target.value);
            setPage(1);
          }}
        />
      ) : null}
      <div className="table-scroll">
        <table className="table" aria-label={`Servers for fleet entry ${entry.id}`}>
          <thead>
            <tr>
              <th scope="col">Server</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {entry.origin.server_id !== null && current === 1 && standing === 'all' && !needle ? (
              <tr>
                <td>{entry.origin.server_name}</td>
                <td>first server: its own ban</td>
              </tr>
            ) : null}
            {visible.map((s) => (
              <tr key={s.server_id}>
                <td className="nowrap">{s.server_name}</td>
                <td className={s.state === 'failed' ? 'error-text' : undefined}>{stateWords(s)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {pages > 1 ? (
        <PageNav label={`Pages of fleet entry ${entry.id}`} current={current} pages={pages} onPage={setPage}>
          Page {current} of {pages} · servers {(current - 1) * SERVERS_PAGE + 1}–
          {Math.min(current * SERVERS_PAGE, shown.length)} of {shown.length}
        </PageNav>
      ) : null}
    </div>
  );
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
          {blocking.length > 0 ? (
            <div className="actions">
              <ConfirmButton
                label="Lift everywhere"
                confirmLabel={`Lift ${answer.ip} on every server`}
                busy={lifting}
                onConfirm={() => void lift()}
              />
            </div>
          ) : null}
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
                <EntryServers entry={e} />
              </div>
            ))
          )}
        </div>
      ) : null}
    </section>
  );
}
