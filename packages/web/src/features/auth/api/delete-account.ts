import type { DashboardData, ProofRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { clearQueries, invalidate, useMutation } from '../../../lib/query';
import { meKey } from './get-me';

/** The password (and code); nothing for a person without a password, whose proof is a fresh sign-in. */
export const deleteAccount = (input: ProofRequest) =>
  request<DashboardData<'accountDeleted'>>('DELETE', '/api/account', { body: input });

/** Gone: nothing of the account stays in memory, and asking who we are sends the browser to sign in. */
export const useDeleteAccount = () =>
  useMutation(deleteAccount, () => {
    clearQueries();
    invalidate(meKey);
  });
