import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { tokensKey } from './get-tokens';

export const revokeToken = (id: number) => request<{ revoked: boolean }>('DELETE', `/api/tokens/${id}`);

export const useRevokeToken = () => useMutation(revokeToken, () => invalidate(tokensKey));
