import { useState } from 'react';
import { Button, ConfirmButton } from '../../../components/buttons';
import { TextArea } from '../../../components/field';
import { ErrorNote, StatusLine } from '../../../components/states';
import { errorText } from '../../../lib/api';
import { changeControl } from '../api/change-control';
import { controlProblem, getControl } from '../api/get-control';
import { editProps } from './control-state';

/** The learned traffic profile: export it to a file, import one, or forget it so the agent learns anew. */
export function BaselinePanel({ serverId, canEdit }: { serverId: number; canEdit: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [importText, setImportText] = useState('');

  const act = async (what: () => Promise<string>) => {
    setBusy(true);
    setError(null);
    setStatus('');
    try {
      setStatus(await what());
    } catch (err) {
      const problem = controlProblem(err);
      setError(problem.kind === 'other' ? errorText(err) : problem.text);
    } finally {
      setBusy(false);
    }
  };

  const exportBaseline = () =>
    act(async () => {
      const body = await getControl(serverId, 'baseline/export');
      const url = URL.createObjectURL(new Blob([JSON.stringify(body, null, 2)], { type: 'application/json' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = `baseline-server-${serverId}.json`;
      link.click();
      setTimeout(() => URL.revokeObjectURL(url), 1000);
      return 'Baseline exported.';
    });

  const importBaseline = () =>
    act(async () => {
      let body: unknown;
      try {
        body = JSON.parse(importText);
      } catch {
        throw new Error('The baseline is not valid JSON. Paste a file made by Export.');
      }
      await changeControl(serverId, { method: 'POST', path: 'baseline/import', body });
      setImportText('');
      return 'Baseline imported.';
    });

  return (
    <section className="card" aria-labelledby="baseline-title">
      <h3 id="baseline-title">Traffic baseline</h3>
      <p className="muted">What normal traffic looks like on this server; attacks are measured against it.</p>
      <div className="actions">
        <Button busy={busy} onClick={() => void exportBaseline()}>
          Export
        </Button>
        <ConfirmButton
          label="Forget baseline"
          confirmLabel="Yes, forget it"
          disabled={!canEdit || busy}
          onConfirm={() =>
            void act(async () => {
              await changeControl(serverId, { method: 'POST', path: 'baseline/delete' });
              return 'Baseline forgotten. The agent learns a new one.';
            })
          }
        />
      </div>
      <TextArea
        label="Import a baseline"
        hint="Paste the JSON of an exported baseline."
        rows={3}
        value={importText}
        onChange={(e) => setImportText(e.target.value)}
        {...editProps(canEdit)}
      />
      <Button busy={busy} disabled={!canEdit || !importText.trim()} onClick={() => void importBaseline()}>
        Import
      </Button>
      <ErrorNote message={error} />
      {status ? <StatusLine>{status}</StatusLine> : null}
    </section>
  );
}
