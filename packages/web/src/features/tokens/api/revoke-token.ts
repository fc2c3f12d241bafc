import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { tokensKey } from './get-tokens';

export const revokeToken = (id: number) => request<DashboardData<'revoked'>>('DELETE', `/api/tokens/${id}`);

export const useRevokeToken = () => useMutation(revokeToken, () => invalidate(tokensKey));
