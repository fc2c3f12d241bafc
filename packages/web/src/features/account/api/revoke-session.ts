import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { sessionsKey } from './get-sessions';

export const revokeSession = (id: string) =>
  request<DashboardData<'revoked'>>('DELETE', `/api/account/sessions/${encodeURIComponent(id)}`);

export const useRevokeSession = () => useMutation(revokeSession, () => invalidate(sessionsKey));

export const revokeOtherSessions = () =>
  request<DashboardData<'sessionsEnded'>>('POST', '/api/account/sessions/revoke-others', { body: {} });

export const useRevokeOtherSessions = () => useMutation(revokeOtherSessions, () => invalidate(sessionsKey));
