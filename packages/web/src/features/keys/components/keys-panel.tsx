import { CredentialsPanel } from '../../../components/credentials';
import { ApiError } from '../../../lib/api';
import { useCreateKey } from '../api/create-key';
import { useKeys } from '../api/get-keys';
import { useRevokeKey } from '../api/revoke-key';

/** Signing keys for SVC1 requests (`svck_…`). */
export function KeysPanel() {
  const list = useKeys();
  const create = useCreateKey();
  const revoke = useRevokeKey();
  if (list.error instanceof ApiError && list.error.status === 404)
    return <p className="note note-muted">Signing keys are not available on this console yet.</p>;
  return (
    <CredentialsPanel
      what="API key"
      prefix="svck_"
      list={list}
      create={create}
      revoke={revoke}
      rawOf={(out) => (out as { key?: string }).key}
    />
  );
}
