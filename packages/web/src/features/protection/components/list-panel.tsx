import type { ImportAnswer } from '@palisade/protocol/control-schemas';
import { type FormEvent, useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { TextArea, TextField } from '../../../components/field';
import { Empty, ErrorNote, StatusLine } from '../../../components/states';
import { overlaps } from '../../../lib/address-range';
import { dateTime } from '../../../lib/format';
import type { Errors } from '../../../lib/schema';
import { checkListEntry, type ListEntryValues, parseImport, toListEntry } from '../api/add-list-entry';
import { useChangeControl } from '../api/change-control';
import { type ControlItem, type ControlPath, type EntryListPath, useControlList } from '../api/get-control';
import { ControlState, editProps, writeError } from './control-state';

/** The other list an entry may also be on, and what that means (the whitelist always wins). */
export interface OtherList {
  path: EntryListPath;
  /** "Also on the whitelist as 198.51.100.7: …" */
  warning: (other: string) => string;
}

type Entry = ControlItem<EntryListPath>;
const NO_ENTRY: ListEntryValues = { ip: '', note: '', ttl: '' };

/** The add form: checks the entry, and clears itself once `onAdd` says it was added. */
function EntryForm({
  title,
  canEdit,
  busy,
  onAdd,
}: {
  title: string;
  canEdit: boolean;
  busy: boolean;
  onAdd: (entry: ReturnType<typeof toListEntry>) => Promise<boolean>;
}) {
  const [values, setValues] = useState<ListEntryValues>(NO_ENTRY);
  const [errors, setErrors] = useState<Errors<keyof ListEntryValues>>({});
  const field = (key: keyof ListEntryValues) => ({
    value: values[key],
    error: errors[key],
    onChange: (e: { target: { value: string } }) => setValues({ ...values, [key]: e.target.value }),
    ...editProps(canEdit),
  });

  const add = async (event: FormEvent) => {
    event.preventDefault();
    const checked = checkListEntry(values);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    if (await onAdd(toListEntry(values))) setValues(NO_ENTRY);
  };

  return (
    <form className="inline-form" onSubmit={(e) => void add(e)} noValidate aria-label={`Add to ${title}`}>
      <TextField label="IP or CIDR" placeholder="203.0.113.7" {...field('ip')} />
      <TextField label="Note" {...field('note')} />
      <TextField label="Expires after (min)" inputMode="numeric" placeholder="never" {...field('ttl')} />
      <Button type="submit" variant="primary" busy={busy} {...editProps(canEdit)}>
        Add
      </Button>
    </form>
  );
}

const expiresText = (e: Entry) =>
  e.expires_at ? dateTime(e.expires_at) : e.ttl_s ? `${Math.round(e.ttl_s / 60)} min` : 'never';

/** The entries, each with the warnings of the other list's entries it shares addresses with. */
function EntryTable({
  title,
  entries,
  otherEntries,
  other,
  canEdit,
  onRemove,
}: {
  title: string;
  entries: Entry[];
  otherEntries: Entry[];
  other?: OtherList;
  canEdit: boolean;
  onRemove: (ip: string) => void;
}) {
  if (entries.length === 0)
    return (
      <Empty>
        <p>The list is empty.</p>
      </Empty>
    );
  return (
    <table className="table cards-on-mobile" aria-label={title}>
      <thead>
        <tr>
          <th scope="col">Address</th>
          <th scope="col">Note</th>
          <th scope="col">Expires</th>
          <th scope="col">
            <span className="visually-hidden">Actions</span>
          </th>
        </tr>
      </thead>
      <tbody>
        {entries.map((e) => (
          <tr key={e.ip}>
            <td data-label="Address">
              <code className="address">{e.ip}</code>
              {otherEntries
                .filter((o) => overlaps(o.ip, e.ip))
                .map((o) => (
                  <span key={o.ip} className="entry-warning" role="note">
                    ⚠ {other!.warning(o.ip)}
                  </span>
                ))}
            </td>
            <td data-label="Note">{e.note || '—'}</td>
            <td data-label="Expires">{expiresText(e)}</td>
            <td>
              <Button
                small
                variant="danger"
                aria-label={`Remove ${e.ip}`}
                onClick={() => onRemove(e.ip)}
                {...editProps(canEdit)}
              >
                Remove
              </Button>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The import box: the text is kept until `onImport` says it was imported. */
function ImportBox({ busy, onImport }: { busy: boolean; onImport: (text: string) => Promise<boolean> }) {
  const [text, setText] = useState('');
  return (
    <div className="import-box">
      <TextArea
        label="Addresses to import"
        hint="One IP or CIDR per line. Lines starting with # are ignored."
        rows={6}
        value={text}
        onChange={(e) => setText(e.target.value)}
      />
      <Button variant="primary" busy={busy} onClick={() => void onImport(text).then((done) => done && setText(''))}>
        Import
      </Button>
    </div>
  );
}

/** What an import did, in one line: the agent's counts plus the lines the dashboard already left out. */
function importedText(out: ImportAnswer, sent: number, leftOut: number): string {
  const bad = Array.isArray(out.invalid) ? out.invalid.length : (out.invalid ?? 0);
  return `Imported: ${out.added ?? sent} added, ${out.skipped ?? 0} already there, ${bad + leftOut} invalid.`;
}

/**
 * An allow or block list: add, remove, import and clear. `importPath` is the agent's import route;
 * without one, an import posts the entries as an array to the list itself. With `other`, an entry
 * sharing addresses with an entry of that list carries a warning.
 */
export function ListPanel({
  serverId,
  title,
  path,
  clearPath,
  importPath,
  canEdit,
  description,
  other,
}: {
  other?: OtherList;
  serverId: number;
  title: string;
  path: EntryListPath;
  clearPath?: ControlPath;
  importPath?: ControlPath;
  canEdit: boolean;
  description: string;
}) {
  const query = useControlList(serverId, path);
  // The same query key as the other list's own panel: one request serves both.
  const otherList = useControlList(serverId, other?.path ?? path);
  const otherEntries = other ? (otherList.data ?? []) : [];
  const change = useChangeControl(serverId, [path]);
  const [importing, setImporting] = useState(false);
  const [status, setStatus] = useState('');
  const id = path.replace(/\W+/g, '-');

  /** Runs one change; on success shows `done` and answers true. */
  const apply = async (call: Parameters<typeof change.run>[0], done: (out: unknown) => string) => {
    const out = await change.run(call);
    if (out === undefined) return false;
    setStatus(done(out));
    return true;
  };

  const runImport = async (text: string) => {
    const { entries, invalid } = parseImport(text);
    if (entries.length === 0) {
      setStatus(
        invalid.length ? `Nothing to import: ${invalid.length} lines are not IPs or CIDRs.` : 'Nothing to import.',
      );
      return false;
    }
    const body = { method: 'POST' as const, path: importPath ?? path, body: entries };
    const done = await apply(body, (out) => importedText(out as ImportAnswer, entries.length, invalid.length));
    if (done) setImporting(false);
    return done;
  };

  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{title}</h3>
      <p className="muted">{description}</p>
      <ControlState query={query} what={`Loading the ${title.toLowerCase()}`}>
        {(entries) => (
          <>
            <EntryForm
              title={title}
              canEdit={canEdit}
              busy={change.pending}
              onAdd={(entry) => apply({ method: 'POST', path, body: entry }, () => `${entry.ip} added.`)}
            />
            <ErrorNote message={writeError(change.error)} />
            {status ? <StatusLine>{status}</StatusLine> : null}
            <EntryTable
              title={title}
              entries={entries}
              otherEntries={otherEntries}
              other={other}
              canEdit={canEdit}
              onRemove={(ip) => void apply({ method: 'DELETE', path, query: { ip } }, () => `${ip} removed.`)}
            />
            <div className="actions">
              <Button onClick={() => setImporting(!importing)} aria-expanded={importing} {...editProps(canEdit)}>
                Import…
              </Button>
              {clearPath ? (
                <ConfirmButton
                  label="Clear list"
                  confirmLabel={`Yes, clear the ${title.toLowerCase()}`}
                  disabled={!canEdit || entries.length === 0}
                  onConfirm={() => void apply({ method: 'POST', path: clearPath }, () => 'List cleared.')}
                />
              ) : null}
            </div>
            {importing ? <ImportBox busy={change.pending} onImport={runImport} /> : null}
          </>
        )}
      </ControlState>
    </section>
  );
}
