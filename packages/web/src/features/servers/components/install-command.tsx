import type { CreatedEnrolmentToken, EnrolmentToken } from '@palisade/protocol';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Button, ConfirmButton, CopyButton } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { Empty, ErrorNote, QueryView } from '../../../components/states';
import { dateTime, timeAgo } from '../../../lib/format';
import { useAgentUpdates } from '../../agent-updates/api/agent-updates';
import { useCreateEnrolmentToken } from '../api/create-enrolment-token';
import { useEnrolmentTokens } from '../api/get-enrolment-tokens';
import { useRevokeEnrolmentToken } from '../api/revoke-enrolment-token';
import type { ProductChoice } from './add-server-form';

const HOUR = 3600_000;
const LIFETIMES = [
  { label: '1 hour', ms: HOUR },
  { label: '1 day', ms: 24 * HOUR },
  { label: '7 days', ms: 7 * 24 * HOUR },
  { label: '30 days', ms: 30 * 24 * HOUR },
  { label: '1 year', ms: 365 * 24 * HOUR },
];

const STATES: Record<EnrolmentToken['state'], string> = {
  active: 'active',
  expired: 'expired',
  used_up: 'used up',
  revoked: 'revoked',
};

/** The line to paste, shown once with the token in it; it lives only in this component's state. */
function CommandOnce({ created, onDone }: { created: CreatedEnrolmentToken; onDone: () => void }) {
  const box = useRef<HTMLElement>(null);
  useEffect(() => box.current?.focus(), []);
  // `--protect auto`: the agent enables the log patterns of the services it finds (docs/agent.md, "One-line install").
  const [protect, setProtect] = useState(false);
  const extra = protect ? ' --protect auto' : '';
  const command = `${created.command}${extra}`;
  const rootCommand = `${created.root_command}${extra}`;
  return (
    <section className="secret-box" ref={box} tabIndex={-1} aria-label="Install command">
      <p>
        <strong>Run this on the server.</strong> It is shown only once; the token in it adds{' '}
        {created.max_uses === 1 ? 'one server' : `up to ${created.max_uses} servers`} until{' '}
        {dateTime(created.expires_at)}.
      </p>
      <p>
        <label>
          <input type="checkbox" checked={protect} onChange={(e) => setProtect(e.target.checked)} /> Enable protection
          for the services found
        </label>{' '}
        <span className="muted small">
          Adds <code>--protect auto</code>: the agent enables the log patterns of sshd, nginx, Apache, Postfix and
          Dovecot where it finds them.
        </span>
      </p>
      <p className="hint">As a user with sudo:</p>
      <code className="secret command" data-testid="install-command">
        {command}
      </code>
      <div className="actions">
        <CopyButton value={command} />
      </div>
      <p className="hint">In a root shell (a host without sudo):</p>
      <code className="secret command" data-testid="install-command-root">
        {rootCommand}
      </code>
      <div className="actions">
        <CopyButton value={rootCommand} />
        <Button small onClick={onDone}>
          Done
        </Button>
      </div>
      <p className="hint" data-testid="release-signing">
        {created.release_key ? (
          <>
            Releases are signed: the line pins the release key <code>{created.release_key}</code>, and the script
            installs only artifacts whose SHA256SUMS that key signed.
          </>
        ) : (
          <>Releases are unsigned: nothing but the SHA-256 from this console guards the download.</>
        )}
      </p>
      <p className="hint">
        The script checks the download's SHA-256, installs the agent, which makes its own key, and registers it. The
        server then appears on the fleet page by itself.
      </p>
      <p className="hint">
        A server this console cannot reach (behind NAT or a firewall with no inbound rule) is added too: its agent then
        keeps an outbound link to the console, and the server page shows it.
      </p>
    </section>
  );
}

/** "Install with one command": an enrolment token for a product, the line to paste, and the tokens made so far. */
export function InstallCommand({ products }: { products: ProductChoice[] }) {
  const firstFree = products.find((p) => p.servers_used < p.server_limit) ?? products[0];
  const [productId, setProductId] = useState(firstFree ? String(firstFree.id) : '');
  const [uses, setUses] = useState('1');
  const [lifetime, setLifetime] = useState(String(HOUR));
  const [usesError, setUsesError] = useState<string | undefined>();
  const create = useCreateEnrolmentToken();
  const revoke = useRevokeEnrolmentToken();
  const tokens = useEnrolmentTokens();
  const names = new Map(products.map((p) => [p.id, p.name]));

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    const maxUses = Number(uses);
    if (!Number.isInteger(maxUses) || maxUses < 1 || maxUses > 10_000)
      return setUsesError('A whole number from 1 to 10000.');
    setUsesError(undefined);
    await create.run({ product_id: Number(productId), max_uses: maxUses, valid_ms: Number(lifetime) });
  };

  // A console without agent packages: a line would fail at its first download, so none is offered.
  const release = useAgentUpdates();
  if (release.data && release.data.served_version === null)
    return (
      <div className="note note-warn" role="status" data-testid="no-packages">
        <p>
          <strong>This console has no agent packages yet</strong>, so an install command would fail at its first
          download. On the console's host, run <code>npm run package</code> in the Palisade checkout, or copy a
          release's files (<code>SHA256SUMS</code> and the <code>palisade-agent</code> files) into the console's agent
          packages directory (<code>PALISADE_ARTIFACTS_DIR</code>; docs/deploy.md), then reload this page.
        </p>
        <p>Meanwhile a server whose agent is already installed can be added by its address below.</p>
      </div>
    );

  return (
    <div className="stack">
      <form className="card form" onSubmit={(e) => void submit(e)} noValidate aria-label="Install with one command">
        <SelectField label="Product" value={productId} onChange={(e) => setProductId(e.target.value)}>
          {products.map((p) => (
            <option key={p.id} value={p.id} disabled={p.servers_used >= p.server_limit}>
              {p.name} ({p.servers_used} of {p.server_limit} servers used)
            </option>
          ))}
        </SelectField>
        <TextField
          label="Servers"
          value={uses}
          error={usesError}
          onChange={(e) => setUses(e.target.value)}
          inputMode="numeric"
          hint="How many servers may register with this token: 1 for one server, more for a fleet rolled out by Ansible or cloud-init."
        />
        <SelectField label="Valid for" value={lifetime} onChange={(e) => setLifetime(e.target.value)}>
          {LIFETIMES.map((l) => (
            <option key={l.ms} value={l.ms}>
              {l.label}
            </option>
          ))}
        </SelectField>
        <div className="actions">
          <Button type="submit" variant="primary" busy={create.pending}>
            {create.pending ? 'Creating…' : 'Create install command'}
          </Button>
        </div>
        <ErrorNote message={create.error ?? revoke.error} />
      </form>
      {create.data ? <CommandOnce created={create.data} onDone={create.reset} /> : null}
      <QueryView query={tokens} what="Loading enrolment tokens">
        {(items) =>
          items.length === 0 ? (
            <Empty>
              <p>No enrolment tokens yet.</p>
            </Empty>
          ) : (
            <table className="table cards-on-mobile" aria-label="Enrolment tokens">
              <thead>
                <tr>
                  <th scope="col">Product</th>
                  <th scope="col">Token</th>
                  <th scope="col">Servers</th>
                  <th scope="col">Expires</th>
                  <th scope="col">State</th>
                  <th scope="col">
                    <span className="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {items.map((t) => (
                  <tr key={t.id}>
                    <td data-label="Product">{names.get(t.product_id) ?? t.name}</td>
                    <td data-label="Token">
                      <code>enr_…{t.last4}</code>
                    </td>
                    <td data-label="Servers">
                      {t.uses} of {t.max_uses}
                    </td>
                    <td data-label="Expires">
                      {t.expires_at > Date.now() ? dateTime(t.expires_at) : timeAgo(t.expires_at)}
                    </td>
                    <td data-label="State">{STATES[t.state]}</td>
                    <td>
                      {t.state === 'active' ? (
                        <ConfirmButton
                          small
                          label="Revoke"
                          confirmLabel={`Revoke enr_…${t.last4}`}
                          onConfirm={() => void revoke.run(t.id)}
                        />
                      ) : null}
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
