import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { clearQueries, invalidate, useMutation } from '../../../lib/query';
import { meKey } from './get-me';

export const signOut = () => request<DashboardData<'loggedOut'>>('POST', '/api/auth/logout', { body: {} });

export const useSignOut = (onDone: () => void) =>
  useMutation(signOut, () => {
    clearQueries();
    invalidate(meKey);
    onDone();
  });
