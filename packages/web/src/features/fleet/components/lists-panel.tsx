import type { FleetEntry, FleetList } from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { Empty, ErrorNote, QueryView } from '../../../components/states';
import { dateTime } from '../../../lib/format';
import { useMutation } from '../../../lib/query';
import { addEntry, liftEntry, useEntries } from '../api/fleet';
import { scopeWords } from './policies-panel';

/** Why an entry is there: the first server's attack or pattern, or the fleet list and who added it. */
export function whyWords(e: FleetEntry): string {
  if (e.origin.kind === 'manual') return `fleet ${e.list}list (${e.created_by}): ${e.reason}`;
  return `${e.origin.event ?? e.origin.kind} on ${e.origin.server_name ?? 'a removed server'}`;
}

function EntryRow({ e }: { e: FleetEntry }) {
  const lift = useMutation(() => liftEntry(e.id));
  return (
    <tr>
      <td data-label="List">{e.list === 'black' ? 'Blacklist' : 'Whitelist'}</td>
      <td data-label="Address">
        <code className="address">{e.address}</code>
      </td>
      <td data-label="Why">{whyWords(e)}</td>
      <td data-label="Where">{scopeWords(e)}</td>
      <td data-label="Since" className="nowrap">
        {dateTime(e.created_at)}
        <div className="muted small">{e.expires_at ? `until ${dateTime(e.expires_at)}` : 'no expiry'}</div>
      </td>
      <td data-label="Servers">
        {e.counts.applied} applied
        {e.counts.pending > 0 ? `, ${e.counts.pending} pending` : ''}
        {e.counts.failed > 0 ? `, ${e.counts.failed} failed` : ''}
      </td>
      <td data-label="Actions">
        <ConfirmButton
          small
          label="Lift"
          confirmLabel="Lift everywhere"
          busy={lift.pending}
          onConfirm={() => void lift.run(undefined)}
        />
        <ErrorNote message={lift.error} />
      </td>
    </tr>
  );
}

/** The fleet blacklist and whitelist: every server in an entry's scope enforces it beside its own lists. */
export function ListsPanel() {
  const query = useEntries();
  const [list, setList] = useState<FleetList>('black');
  const [ip, setIp] = useState('');
  const [reason, setReason] = useState('');
  const [minutes, setMinutes] = useState('');
  const [wide, setWide] = useState(false);
  const add = useMutation(addEntry, () => {
    setIp('');
    setReason('');
    setMinutes('');
    setWide(false);
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void add.run({
      list,
      ip: ip.trim(),
      scope: 'all',
      ...(reason.trim() ? { reason: reason.trim() } : {}),
      ...(minutes.trim() ? { ttl_s: Number(minutes) * 60 } : {}),
      ...(wide ? { confirm_wide: true } : {}),
    });
  };

  return (
    <section className="card" aria-labelledby="fleet-lists-title">
      <h2 id="fleet-lists-title">Fleet lists</h2>
      <p className="muted">
        Propagated bans and entries added here. A fleet whitelist entry always wins, as on each server.
      </p>
      <QueryView query={query} what="Loading the fleet lists">
        {(entries) =>
          entries.length === 0 ? (
            <Empty>
              <p>Nothing on the fleet lists.</p>
            </Empty>
          ) : (
            <div className="table-scroll">
              <table className="table cards-on-mobile" aria-label="Fleet list entries">
                <thead>
                  <tr>
                    <th scope="col">List</th>
                    <th scope="col">Address</th>
                    <th scope="col">Why</th>
                    <th scope="col">Where</th>
                    <th scope="col">Since</th>
                    <th scope="col">Servers</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {entries.map((e) => (
                    <EntryRow key={e.id} e={e} />
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryView>
      <form className="inline-form" onSubmit={submit} noValidate aria-label="Add to a fleet list">
        <SelectField label="List" value={list} onChange={(e) => setList(e.target.value as FleetList)}>
          <option value="black">Blacklist</option>
          <option value="white">Whitelist</option>
        </SelectField>
        <TextField label="IP or CIDR" value={ip} placeholder="203.0.113.7" onChange={(e) => setIp(e.target.value)} />
        <TextField label="Reason" value={reason} onChange={(e) => setReason(e.target.value)} />
        <TextField
          label="Minutes"
          placeholder="until lifted"
          value={minutes}
          inputMode="numeric"
          onChange={(e) => setMinutes(e.target.value)}
        />
        <label>
          <input type="checkbox" checked={wide} onChange={(e) => setWide(e.target.checked)} /> Wider than /8 (IPv4) or
          /32 (IPv6): I mean it
        </label>
        <Button type="submit" variant="primary" busy={add.pending}>
          Add to all servers
        </Button>
      </form>
      <ErrorNote message={add.error} />
    </section>
  );
}
