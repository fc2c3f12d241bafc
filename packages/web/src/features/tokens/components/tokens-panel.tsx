import { CredentialsPanel } from '../../../components/credentials';
import { useCreateToken } from '../api/create-token';
import { useTokens } from '../api/get-tokens';
import { useRevokeToken } from '../api/revoke-token';

export function TokensPanel() {
  return (
    <CredentialsPanel
      what="token"
      prefix="svc_"
      list={useTokens()}
      create={useCreateToken()}
      revoke={useRevokeToken()}
      rawOf={(out) => (out as { token?: string }).token}
    />
  );
}
