import { FLEET_SCOPES, FLEET_TRIGGERS, type FleetPolicy, type FleetScope, type FleetTrigger } from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { Empty, ErrorNote, QueryView } from '../../../components/states';
import { useMutation } from '../../../lib/query';
import { addPolicy, removePolicy, setPolicyEnabled, usePolicies } from '../api/fleet';

export const TRIGGER_WORDS: Record<FleetTrigger, string> = {
  attack: 'an attack',
  pattern: 'a log pattern',
  any: 'an attack or a log pattern',
};

/** "all servers", "servers tagged web, api", "servers of product 3". */
export function scopeWords(s: { scope: FleetScope; tags: string[]; product_id: number | null }): string {
  if (s.scope === 'all') return 'all servers';
  if (s.scope === 'tags') return `servers tagged ${s.tags.join(', ')}`;
  return `servers of product ${s.product_id}`;
}

const duration = (s: number | null) => (s === null ? 'as long as the first ban' : `${Math.round(s / 60)} min`);

function PolicyRow({ p }: { p: FleetPolicy }) {
  const toggle = useMutation((enabled: boolean) => setPolicyEnabled(p, enabled));
  const remove = useMutation(() => removePolicy(p.id));
  return (
    <tr>
      <td data-label="Policy">{p.name}</td>
      <td data-label="When">a server in scope bans for {TRIGGER_WORDS[p.trigger]}</td>
      <td data-label="Where">{scopeWords(p)}</td>
      <td data-label="For how long">{duration(p.duration_s)}</td>
      <td data-label="State">
        <span className={`pill ${p.enabled ? 'pill-ok' : ''}`}>{p.enabled ? 'on' : 'off'}</span>
      </td>
      <td data-label="Actions" className="nowrap">
        <Button small busy={toggle.pending} onClick={() => void toggle.run(!p.enabled)}>
          {p.enabled ? 'Turn off' : 'Turn on'}
        </Button>{' '}
        <ConfirmButton
          small
          label="Remove"
          confirmLabel="Remove policy"
          busy={remove.pending}
          onConfirm={() => void remove.run(undefined)}
        />
        <ErrorNote message={toggle.error ?? remove.error} />
      </td>
    </tr>
  );
}

/** The account's fleet policies and a form to add one. */
export function PoliciesPanel() {
  const query = usePolicies();
  const [name, setName] = useState('');
  const [trigger, setTrigger] = useState<FleetTrigger>('any');
  const [scope, setScope] = useState<FleetScope>('all');
  const [tags, setTags] = useState('');
  const [product, setProduct] = useState('');
  const [minutes, setMinutes] = useState('');
  const [allowPrivate, setAllowPrivate] = useState(false);
  const add = useMutation(addPolicy, () => {
    setName('');
    setTags('');
    setMinutes('');
    setAllowPrivate(false);
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    void add.run({
      name: name.trim(),
      trigger,
      scope,
      ...(scope === 'tags' ? { tags: tags.split(/[\s,]+/).filter(Boolean) } : {}),
      ...(scope === 'product' ? { product_id: Number(product) } : {}),
      duration_s: minutes.trim() ? Number(minutes) * 60 : null,
      ...(allowPrivate ? { allow_private: true } : {}),
    });
  };

  return (
    <section className="card" aria-labelledby="fleet-policies-title">
      <h2 id="fleet-policies-title">Policies</h2>
      <p className="muted">
        When one server bans an address, the console bans it on the other servers in the policy's scope.
      </p>
      <QueryView query={query} what="Loading the policies">
        {(policies) =>
          policies.length === 0 ? (
            <Empty>
              <p>No policies yet: each server blocks only what it detects itself.</p>
            </Empty>
          ) : (
            <div className="table-scroll">
              <table className="table cards-on-mobile" aria-label="Fleet policies">
                <thead>
                  <tr>
                    <th scope="col">Policy</th>
                    <th scope="col">When</th>
                    <th scope="col">Where</th>
                    <th scope="col">For how long</th>
                    <th scope="col">State</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {policies.map((p) => (
                    <PolicyRow key={p.id} p={p} />
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </QueryView>
      <form className="inline-form" onSubmit={submit} noValidate aria-label="Add a policy">
        <TextField label="Name" value={name} placeholder="Ban everywhere" onChange={(e) => setName(e.target.value)} />
        <SelectField
          label="When a server bans for"
          value={trigger}
          onChange={(e) => setTrigger(e.target.value as FleetTrigger)}
        >
          {FLEET_TRIGGERS.map((t) => (
            <option key={t} value={t}>
              {TRIGGER_WORDS[t]}
            </option>
          ))}
        </SelectField>
        <SelectField label="Ban it on" value={scope} onChange={(e) => setScope(e.target.value as FleetScope)}>
          {FLEET_SCOPES.map((s) => (
            <option key={s} value={s}>
              {s === 'all' ? 'all servers' : s === 'tags' ? 'servers with tags' : 'servers of a product'}
            </option>
          ))}
        </SelectField>
        {scope === 'tags' ? (
          <TextField label="Tags" value={tags} placeholder="web, api" onChange={(e) => setTags(e.target.value)} />
        ) : null}
        {scope === 'product' ? (
          <TextField
            label="Product id"
            value={product}
            inputMode="numeric"
            onChange={(e) => setProduct(e.target.value)}
          />
        ) : null}
        <TextField
          label="Minutes"
          placeholder="as long as the first ban"
          value={minutes}
          inputMode="numeric"
          onChange={(e) => setMinutes(e.target.value)}
        />
        <label>
          <input type="checkbox" checked={allowPrivate} onChange={(e) => setAllowPrivate(e.target.checked)} /> Private
          addresses too (10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7)
        </label>
        <Button type="submit" variant="primary" busy={add.pending}>
          Add policy
        </Button>
      </form>
      <ErrorNote message={add.error} />
    </section>
  );
}
