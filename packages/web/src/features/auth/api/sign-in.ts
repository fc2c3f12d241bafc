import { z } from 'zod';
import { request } from '../../../lib/api';
import { setQueryData, useMutation } from '../../../lib/query';
import { parse, text } from '../../../lib/schema';
import type { Me } from '../../../lib/wire';
import { meKey } from './get-me';

export const signInInput = z.object({
  email: text({ min: 1, max: 254 }),
  password: text({ min: 1, max: 1024 }),
});

export type SignInInput = { email: string; password: string };

export const signIn = (input: SignInInput) => request<{ account: Me }>('POST', '/api/auth/login', { body: input });

export const useSignIn = (onDone: () => void) =>
  useMutation(signIn, (out) => {
    setQueryData(meKey, out.account);
    onDone();
  });

export const checkSignIn = (values: SignInInput) => parse(signInInput, values);
