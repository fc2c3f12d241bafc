import { request } from '../../../lib/api';
import { setQueryData, useMutation } from '../../../lib/query';
import { all, parse, pattern, text } from '../../../lib/schema';
import type { Me } from '../../../lib/wire';
import { meKey } from './get-me';

/** The console's limits: name 1–100, email up to 254, password 8–256 (never truncated). */
export const registerInput = {
  name: text({ min: 1, max: 100 }),
  email: all(text({ min: 1, max: 254 }), pattern(/^[^\s@]+@[^\s@]+\.[^\s@]+$/, 'Enter an email address.')),
  password: (value: string) =>
    value.length < 8 ? 'At least 8 characters.' : value.length > 256 ? 'At most 256 characters.' : null,
};

export type RegisterInput = { name: string; email: string; password: string };

export const register = (input: RegisterInput) =>
  request<{ account: Me }>('POST', '/api/auth/register', { body: input });

export const useRegister = (onDone: () => void) =>
  useMutation(register, (out) => {
    setQueryData(meKey, out.account);
    onDone();
  });

export const checkRegister = (values: RegisterInput) => parse(registerInput, values);
