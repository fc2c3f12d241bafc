import { changePasswordRequest, type DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { sessionsKey } from './get-sessions';

export type ChangePasswordInput = { old_password: string; new_password: string; repeat: string };

export const changePassword = ({ old_password, new_password }: ChangePasswordInput) =>
  request<DashboardData<'passwordChanged'>>('POST', '/api/account/password', { body: { old_password, new_password } });

export const useChangePassword = () => useMutation(changePassword, () => invalidate(sessionsKey));

/** The console's rule for both passwords; `repeat` never leaves the form, so only the form compares it. */
export function checkChangePassword(values: ChangePasswordInput) {
  const checked = checkRequest(changePasswordRequest, {
    old_password: values.old_password,
    new_password: values.new_password,
  });
  if (values.repeat === values.new_password) return checked;
  return {
    ok: false as const,
    errors: { ...(checked.ok ? {} : checked.errors), repeat: 'Not the same as the new password.' },
  };
}
