import { type FormEvent, useEffect, useRef, useState } from 'react';
import { timeAgo } from '../lib/format';
import type { MutationState, QueryState } from '../lib/query';
import { Button, ConfirmButton, CopyButton } from './buttons';
import { TextField } from './field';
import { Empty, ErrorNote, QueryView, StatusLine } from './states';

export interface Credential {
  id: number;
  name: string;
  last4: string;
  created_at: number;
  last_used_at: number | null;
}

/** The raw value, shown once; it lives only in this component's state until dismissed. */
export function SecretOnce({ value, what, onDone }: { value: string; what: string; onDone: () => void }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.focus(), []);
  return (
    <section className="secret-box" ref={box} tabIndex={-1} aria-label={`New ${what}`}>
      <p>
        <strong>Copy your new {what} now.</strong> It is shown only once.
      </p>
      <code className="secret" data-testid="secret-value">
        {value}
      </code>
      <div className="actions">
        <CopyButton value={value} />
        <Button small onClick={onDone}>
          I have saved it
        </Button>
      </div>
    </section>
  );
}

/** List, create (named, raw value once) and revoke: the same for access tokens and signing keys. */
export function CredentialsPanel({
  what,
  prefix,
  list,
  create,
  revoke,
  rawOf,
}: {
  what: string;
  prefix: string;
  list: QueryState<Credential[]>;
  create: MutationState<string, unknown>;
  revoke: MutationState<number, unknown>;
  rawOf: (created: unknown) => string | undefined;
}) {
  const [name, setName] = useState('');
  const [nameError, setNameError] = useState<string | undefined>();
  const [raw, setRaw] = useState<string | null>(null);
  const [status, setStatus] = useState('');

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const trimmed = name.trim();
    if (!trimmed) return setNameError('Give it a name, e.g. the machine or script that uses it.');
    if (trimmed.length > 100) return setNameError('At most 100 characters.');
    setNameError(undefined);
    const out = await create.run(trimmed);
    if (out !== undefined) {
      setRaw(rawOf(out) ?? null);
      setName('');
      setStatus('');
    }
  };

  return (
    <div className="stack">
      <form className="inline-form" onSubmit={(e) => void submit(e)} noValidate aria-label={`Create ${what}`}>
        <TextField label="Name" value={name} error={nameError} onChange={(e) => setName(e.target.value)} />
        <Button type="submit" variant="primary" busy={create.pending}>
          Create {what}
        </Button>
      </form>
      <ErrorNote message={create.error ?? revoke.error} />
      {raw ? (
        <SecretOnce
          value={raw}
          what={what}
          onDone={() => {
            setRaw(null);
            create.reset();
          }}
        />
      ) : null}
      {status ? <StatusLine>{status}</StatusLine> : null}
      <QueryView query={list} what={`Loading ${what}s`}>
        {(items) =>
          items.length === 0 ? (
            <Empty>
              <p>No {what}s yet.</p>
            </Empty>
          ) : (
            <table className="table cards-on-mobile" aria-label={`Your ${what}s`}>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Value</th>
                  <th scope="col">Created</th>
                  <th scope="col">Last used</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((t) => (
                  <tr key={t.id}>
                    <td data-label="Name">{t.name}</td>
                    <td data-label="Value">
                      <code>
                        {prefix}…{t.last4}
                      </code>
                    </td>
                    <td data-label="Created">{timeAgo(t.created_at)}</td>
                    <td data-label="Last used">{timeAgo(t.last_used_at)}</td>
                    <td>
                      <ConfirmButton
                        small
                        label="Revoke"
                        confirmLabel={`Revoke ${t.name}`}
                        onConfirm={() =>
                          void revoke.run(t.id).then((out) => out !== undefined && setStatus(`${t.name} revoked.`))
                        }
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </QueryView>
    </div>
  );
}
