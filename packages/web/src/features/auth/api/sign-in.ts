import { type DashboardData, type LoginRequest, loginRequest, type TwoFactorChallenge } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { setQueryData, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { meKey } from './get-me';

export type SignInInput = LoginRequest;

export const signIn = (input: SignInInput) =>
  request<DashboardData<'login'>>('POST', '/api/auth/login', { body: input });

/**
 * Signed in (the account goes in the cache), or, with two-factor on, the challenge the code step
 * needs: `onChallenge` gets it and no session exists yet.
 */
export const useSignIn = (onDone: () => void, onChallenge: (challenge: TwoFactorChallenge) => void) =>
  useMutation(signIn, (out) => {
    if ('challenge' in out) return onChallenge(out);
    setQueryData(meKey, out.account);
    onDone();
  });

export const checkSignIn = (values: SignInInput) => checkRequest(loginRequest, values);
