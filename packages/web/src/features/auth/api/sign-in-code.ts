import type { DashboardData } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { setQueryData, useMutation } from '../../../lib/query';
import { parse, pattern } from '../../../lib/schema';
import { meKey } from './get-me';

/** The 6 digits of the authenticator app, or a recovery code (`xxxxx-xxxxx`, dash and case optional). */
export const signInCodeInput = z.object({
  code: pattern(
    /^([0-9]{6}|[A-Za-z0-9]{5}-?[A-Za-z0-9]{5})$/,
    'Type the 6 digits your authenticator app shows, or one of your recovery codes.',
  ),
});

export type SignInCodeInput = { challenge: string; code: string };

export const signInCode = (input: SignInCodeInput) =>
  request<DashboardData<'account'>>('POST', '/api/auth/login/two-factor', { body: input });

export const useSignInCode = (onDone: () => void) =>
  useMutation(signInCode, (out) => {
    setQueryData(meKey, out.account);
    onDone();
  });

export const checkSignInCode = (values: { code: string }) => parse(signInCodeInput, values);
