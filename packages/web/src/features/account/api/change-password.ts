import type { DashboardData } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse } from '../../../lib/schema';
import { sessionsKey } from './get-sessions';

/** The console's rule for a new password (8 to 256 characters, never truncated), as at registration. */
export const changePasswordInput = z
  .object({
    old_password: z.string().min(1, 'Required: your current password.'),
    new_password: z.string().min(8, 'At least 8 characters.').max(256, 'At most 256 characters.'),
    repeat: z.string(),
  })
  .refine((v) => v.repeat === v.new_password, { path: ['repeat'], message: 'Not the same as the new password.' });

export type ChangePasswordInput = { old_password: string; new_password: string; repeat: string };

export const changePassword = ({ old_password, new_password }: ChangePasswordInput) =>
  request<DashboardData<'passwordChanged'>>('POST', '/api/account/password', { body: { old_password, new_password } });

export const useChangePassword = () => useMutation(changePassword, () => invalidate(sessionsKey));

export const checkChangePassword = (values: ChangePasswordInput) => parse(changePasswordInput, values);
