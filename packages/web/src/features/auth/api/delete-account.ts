import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { clearQueries, invalidate, useMutation } from '../../../lib/query';
import { meKey } from './get-me';

export type DeleteAccountInput = { password: string; code?: string };

export const deleteAccount = (input: DeleteAccountInput) =>
  request<DashboardData<'accountDeleted'>>('DELETE', '/api/account', { body: input });

/** Gone: nothing of the account stays in memory, and asking who we are sends the browser to sign in. */
export const useDeleteAccount = () =>
  useMutation(deleteAccount, () => {
    clearQueries();
    invalidate(meKey);
  });
