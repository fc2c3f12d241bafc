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
import { type ControlPath, type EntryListPath, useControlList } from '../api/get-control';
import { ControlState, editProps, writeError } from './control-state';

/** The other list an entry may also be on, and what that means (the whitelist always wins). */
export interface OtherList {
  path: EntryListPath;
  /** "Also on the whitelist as 198.51.100.7: …" */
  warning: (other: string) => string;
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
  const [values, setValues] = useState<ListEntryValues>({ ip: '', note: '', ttl: '' });
  const [errors, setErrors] = useState<Errors<keyof ListEntryValues>>({});
  const [importText, setImportText] = useState('');
  const [importing, setImporting] = useState(false);
  const [status, setStatus] = useState('');
  const id = path.replace(/\W+/g, '-');

  const add = async (event: FormEvent) => {
    event.preventDefault();
    const checked = checkListEntry(values);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    const entry = toListEntry(values);
    const out = await change.run({ method: 'POST', path, body: entry });
    if (out !== undefined) {
      setValues({ ip: '', note: '', ttl: '' });
      setStatus(`${entry.ip} added.`);
    }
  };

  const runImport = async () => {
    const { entries, invalid } = parseImport(importText);
    if (entries.length === 0) {
      setStatus(
        invalid.length ? `Nothing to import: ${invalid.length} lines are not IPs or CIDRs.` : 'Nothing to import.',
      );
      return;
    }
    const out = (await change.run({ method: 'POST', path: importPath ?? path, body: entries })) as
      | ImportAnswer
      | undefined;
    if (out !== undefined) {
      const bad = Array.isArray(out.invalid) ? out.invalid.length : (out.invalid ?? 0);
      setStatus(
        `Imported: ${out.added ?? entries.length} added, ${out.skipped ?? 0} already there, ${bad + invalid.length} invalid.`,
      );
      setImportText('');
      setImporting(false);
    }
  };

  return (
    <section className="card" aria-labelledby={`${id}-title`}>
      <h3 id={`${id}-title`}>{title}</h3>
      <p className="muted">{description}</p>
      <ControlState query={query} what={`Loading the ${title.toLowerCase()}`}>
        {(entries) => {
          return (
            <>
              <form className="inline-form" onSubmit={(e) => void add(e)} noValidate aria-label={`Add to ${title}`}>
                <TextField
                  label="IP or CIDR"
                  value={values.ip}
                  error={errors.ip}
                  placeholder="203.0.113.7"
                  onChange={(e) => setValues({ ...values, ip: e.target.value })}
                  {...editProps(canEdit)}
                />
                <TextField
                  label="Note"
                  value={values.note}
                  error={errors.note}
                  onChange={(e) => setValues({ ...values, note: e.target.value })}
                  {...editProps(canEdit)}
                />
                <TextField
                  label="Expires after (min)"
                  inputMode="numeric"
                  value={values.ttl}
                  error={errors.ttl}
                  placeholder="never"
                  onChange={(e) => setValues({ ...values, ttl: e.target.value })}
                  {...editProps(canEdit)}
                />
                <Button type="submit" variant="primary" busy={change.pending} {...editProps(canEdit)}>
                  Add
                </Button>
              </form>
              <ErrorNote message={writeError(change.error)} />
              {status ? <StatusLine>{status}</StatusLine> : null}
              {entries.length === 0 ? (
                <Empty>
                  <p>The list is empty.</p>
                </Empty>
              ) : (
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
                        <td data-label="Expires">
                          {e.expires_at
                            ? dateTime(e.expires_at)
                            : e.ttl_s
                              ? `${Math.round(e.ttl_s / 60)} min`
                              : 'never'}
                        </td>
                        <td>
                          <Button
                            small
                            variant="danger"
                            aria-label={`Remove ${e.ip}`}
                            onClick={() =>
                              void change
                                .run({ method: 'DELETE', path, query: { ip: e.ip } })
                                .then((out) => out !== undefined && setStatus(`${e.ip} removed.`))
                            }
                            {...editProps(canEdit)}
                          >
                            Remove
                          </Button>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
              <div className="actions">
                <Button onClick={() => setImporting(!importing)} aria-expanded={importing} {...editProps(canEdit)}>
                  Import…
                </Button>
                {clearPath ? (
                  <ConfirmButton
                    label="Clear list"
                    confirmLabel={`Yes, clear the ${title.toLowerCase()}`}
                    disabled={!canEdit || entries.length === 0}
                    onConfirm={() =>
                      void change
                        .run({ method: 'POST', path: clearPath })
                        .then((out) => out !== undefined && setStatus('List cleared.'))
                    }
                  />
                ) : null}
              </div>
              {importing ? (
                <div className="import-box">
                  <TextArea
                    label="Addresses to import"
                    hint="One IP or CIDR per line. Lines starting with # are ignored."
                    rows={6}
                    value={importText}
                    onChange={(e) => setImportText(e.target.value)}
                  />
                  <Button variant="primary" busy={change.pending} onClick={() => void runImport()}>
                    Import
                  </Button>
                </div>
              ) : null}
            </>
          );
        }}
      </ControlState>
    </section>
  );
}
