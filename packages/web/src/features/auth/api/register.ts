import { type DashboardData, type RegisterRequest, registerRequest } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { setQueryData, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { meKey } from './get-me';

export type RegisterInput = RegisterRequest;

export const register = (input: RegisterInput) =>
  request<DashboardData<'account'>>('POST', '/api/auth/register', { body: input });

export const useRegister = (onDone: () => void) =>
  useMutation(register, (out) => {
    setQueryData(meKey, out.account);
    onDone();
  });

/** The address as typed, without the spaces around it. */
export const registerBody = (values: RegisterInput): RegisterInput => ({ ...values, email: values.email.trim() });

export const checkRegister = (values: RegisterInput) => checkRequest(registerRequest, registerBody(values));
