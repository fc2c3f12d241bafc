import { type DashboardData, type TwoFactorLoginRequest, twoFactorLoginRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { setQueryData, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { meKey } from './get-me';

export type SignInCodeInput = TwoFactorLoginRequest;

export const signInCode = (input: SignInCodeInput) =>
  request<DashboardData<'account'>>('POST', '/api/auth/login/two-factor', { body: input });

export const useSignInCode = (onDone: () => void) =>
  useMutation(signInCode, (out) => {
    setQueryData(meKey, out.account);
    onDone();
  });

export const checkSignInCode = (values: SignInCodeInput) => checkRequest(twoFactorLoginRequest, values);
