import { type FormEvent, useState } from 'react';
import { Button, CopyButton } from '../../../components/buttons';
import { TextField } from '../../../components/field';
import { ErrorNote, StatusLine } from '../../../components/states';
import { useCreateEnrollment } from '../api/create-enrollment';
import { explainCheck, useTestConnection } from '../api/test-connection';
import { checkUpdateKey, useUpdateServer } from '../api/update-server';

/** Rotating the agent key: what to run on the server, then the form that saves the new key. */
export function AgentKeyPanel({ serverId }: { serverId: number }) {
  const [key, setKey] = useState('');
  const [keyError, setKeyError] = useState<string | undefined>();
  const [saved, setSaved] = useState(false);
  const update = useUpdateServer(serverId, () => {
    setKey('');
    setSaved(true);
  });
  const test = useTestConnection();
  const enrollment = useCreateEnrollment();
  const result = test.data ? explainCheck(test.data) : null;

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setSaved(false);
    const checked = checkUpdateKey({ api_key: key });
    if (!checked.ok) return setKeyError(checked.errors.api_key);
    setKeyError(undefined);
    void update.run({ id: serverId, api_key: checked.value.api_key });
  };

  return (
    <section className="card" aria-labelledby="key-title">
      <h2 id="key-title">Agent key</h2>
      <ol className="steps">
        <li>
          On the server, run <code>palisade-agent key</code>. It prints the metrics address and a new key; the old key
          stops working at once.
        </li>
        <li>Paste the new key below. The console tests it against the agent before saving.</li>
      </ol>
      <form className="inline-form" onSubmit={submit} noValidate>
        <TextField
          label="New agent key"
          type="password"
          autoComplete="off"
          placeholder="agk_…"
          value={key}
          error={keyError}
          onChange={(e) => setKey(e.target.value)}
        />
        <Button type="submit" variant="primary" busy={update.pending}>
          Save key
        </Button>
      </form>
      <ErrorNote message={update.error} />
      {saved ? <StatusLine>Key saved. The console reaches the agent with it.</StatusLine> : null}
      <div className="actions">
        <Button busy={test.pending} onClick={() => void test.run({ server_id: serverId })}>
          Test the saved key
        </Button>
      </div>
      <div aria-live="polite">
        {result ? (
          <div className={`note ${result.ok ? 'note-ok' : 'note-bad'}`}>
            <strong>{result.title}.</strong> {result.detail}
          </div>
        ) : null}
      </div>
      <ErrorNote message={test.error} />
      <h3>Agent the console cannot reach?</h3>
      <p className="muted">
        Enrol it by hand: this makes a new check-in token (the old one stops working) and the command to run on the
        server.
      </p>
      <Button busy={enrollment.pending} onClick={() => void enrollment.run(serverId)}>
        Make enrolment command
      </Button>
      <ErrorNote message={enrollment.error} />
      {enrollment.data ? (
        <div className="secret-box">
          <p>Run this on the server. It is shown once.</p>
          <pre className="log">{enrollment.data.command}</pre>
          <CopyButton value={enrollment.data.command} label="Copy command" />
          <Button small onClick={() => enrollment.reset()}>
            Done
          </Button>
        </div>
      ) : null}
    </section>
  );
}
