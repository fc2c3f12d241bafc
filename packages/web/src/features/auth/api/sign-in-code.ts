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

const CODE_SHAPE = /^([0-9]{6}|[A-Za-z0-9]{5}-?[A-Za-z0-9]{5})$/;

/**
 * The console's check, then the code's shape: the 6 digits of the authenticator app, or a recovery
 * code (`xxxxx-xxxxx`, dash and case optional). The console would refuse another shape as a wrong
 * code, which also counts against the account's attempts; a typo should not.
 */
export function checkSignInCode(values: SignInCodeInput) {
  const checked = checkRequest(twoFactorLoginRequest, values);
  if (!checked.ok || CODE_SHAPE.test(checked.value.code)) return checked;
  return {
    ok: false as const,
    errors: { code: 'Type the 6 digits your authenticator app shows, or one of your recovery codes.' },
  };
}
