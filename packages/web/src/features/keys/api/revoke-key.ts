import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { keysKey } from './get-keys';

export const revokeKey = (id: number) => request<DashboardData<'revoked'>>('DELETE', `/api/keys/${id}`);

export const useRevokeKey = () => useMutation(revokeKey, () => invalidate(keysKey));
