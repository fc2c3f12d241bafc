import type { DashboardServer } from '@palisade/protocol';
import { type FormEvent, useState } from 'react';
import { Button } from '../../../components/buttons';
import { SelectField, TextField } from '../../../components/field';
import { ErrorNote } from '../../../components/states';
import type { Errors } from '../../../lib/schema';
import {
  type AddServerValues,
  checkAddServer,
  checkConnection,
  connectionBody,
  isHttpsAddress,
  useAddServer,
} from '../api/add-server';
import { explainCheck, useTestConnection } from '../api/test-connection';

export interface ProductChoice {
  id: number;
  name: string;
  servers_used: number;
  server_limit: number;
}

/** Add a server: test the connection first, explain a failure, then save. */
export function AddServerForm({
  products,
  onAdded,
}: {
  products: ProductChoice[];
  onAdded: (server: DashboardServer) => void;
}) {
  const firstFree = products.find((p) => p.servers_used < p.server_limit) ?? products[0];
  const [values, setValues] = useState<AddServerValues>({
    product_id: firstFree ? String(firstFree.id) : '',
    name: '',
    api_url: '',
    api_key: '',
    tls_fingerprint: '',
  });
  const [errors, setErrors] = useState<Errors<keyof AddServerValues>>({});
  const [testedFor, setTestedFor] = useState<string | null>(null);
  const test = useTestConnection();
  const add = useAddServer(onAdded);

  const https = isHttpsAddress(values.api_url);
  const signature = `${values.api_url.trim()}\n${values.api_key.trim()}\n${https ? values.tls_fingerprint.trim() : ''}`;
  const result = test.data && testedFor === signature ? explainCheck(test.data) : null;

  const set = (key: keyof AddServerValues) => (e: { target: { value: string } }) =>
    setValues({ ...values, [key]: e.target.value });

  const runTest = async () => {
    const checked = checkConnection(values);
    setErrors(checked.ok ? {} : checked.errors);
    if (!checked.ok) return;
    setTestedFor(signature);
    await test.run(connectionBody(values));
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const checked = checkAddServer(values);
    if (!checked.ok) return setErrors(checked.errors);
    setErrors({});
    if (!result?.ok) {
      void runTest();
      return;
    }
    void add.run(checked.value);
  };

  return (
    <form className="card form" onSubmit={submit} noValidate aria-label="Add a server">
      <SelectField label="Product" value={values.product_id} error={errors.product_id} onChange={set('product_id')}>
        {products.map((p) => (
          <option key={p.id} value={p.id} disabled={p.servers_used >= p.server_limit}>
            {p.name} ({p.servers_used} of {p.server_limit} servers used)
          </option>
        ))}
      </SelectField>
      <TextField label="Label" value={values.name} error={errors.name} onChange={set('name')} placeholder="web-1" />
      <TextField
        label="Agent address"
        value={values.api_url}
        error={errors.api_url}
        onChange={set('api_url')}
        placeholder="http://203.0.113.7:9740"
        hint="The metrics address `palisade-agent key` prints."
        inputMode="url"
        autoComplete="off"
      />
      <TextField
        label="Agent key"
        type="password"
        value={values.api_key}
        error={errors.api_key}
        onChange={set('api_key')}
        placeholder="agk_…"
        hint="Kept encrypted by the console; never shown again."
        autoComplete="off"
      />
      {https ? (
        <TextField
          label="TLS fingerprint"
          value={values.tls_fingerprint}
          error={errors.tls_fingerprint}
          onChange={set('tls_fingerprint')}
          placeholder="AB:CD:…"
          hint="The SHA-256 fingerprint the agent prints with metrics.tls = on (also in `palisade-agent info`). The console accepts only that certificate. Leave empty only if the agent's certificate is signed by a public CA."
          autoComplete="off"
          spellCheck={false}
        />
      ) : null}
      <div className="actions">
        <Button onClick={() => void runTest()} busy={test.pending}>
          {test.pending ? 'Testing…' : 'Test connection'}
        </Button>
        <Button type="submit" variant="primary" busy={add.pending} disabled={!result?.ok}>
          {add.pending ? 'Adding…' : 'Add server'}
        </Button>
      </div>
      <div aria-live="polite" className="test-result">
        {result ? (
          <div className={`note ${result.ok ? 'note-ok' : 'note-bad'}`}>
            <strong>{result.title}.</strong> {result.detail}
          </div>
        ) : (
          <p className="hint">Test the connection first; the server is added only when the agent answers.</p>
        )}
      </div>
      <ErrorNote message={test.error ?? add.error} />
    </form>
  );
}
