import type { DashboardData } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { setQueryData, useMutation } from '../../../lib/query';
import { parse, text } from '../../../lib/schema';
import { meKey } from './get-me';

/** The console's limits: name 1–100, email up to 254, password 8–256 (never truncated). */
export const registerInput = z.object({
  name: text({ min: 1, max: 100 }),
  email: text({ min: 1, max: 254 }).regex(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'Enter an email address.'),
  password: z.string().min(8, 'At least 8 characters.').max(256, 'At most 256 characters.'),
});

export type RegisterInput = { name: string; email: string; password: string };

export const register = (input: RegisterInput) =>
  request<DashboardData<'account'>>('POST', '/api/auth/register', { body: input });

export const useRegister = (onDone: () => void) =>
  useMutation(register, (out) => {
    setQueryData(meKey, out.account);
    onDone();
  });

export const checkRegister = (values: RegisterInput) => parse(registerInput, values);
