import type { DashboardData, TwoFactorChallenge } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { setQueryData, useMutation } from '../../../lib/query';
import { parse, text } from '../../../lib/schema';
import { meKey } from './get-me';

export const signInInput = z.object({
  email: text({ min: 1, max: 254 }),
  password: text({ min: 1, max: 1024 }),
});

export type SignInInput = { email: string; password: string };

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

export const checkSignIn = (values: SignInInput) => parse(signInInput, values);
