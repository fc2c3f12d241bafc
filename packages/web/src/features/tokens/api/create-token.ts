import { createTokenRequest, type DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { tokensKey } from './get-tokens';

export const checkCreateToken = (values: { name: string }) => checkRequest(createTokenRequest, values);

/** The answer carries the raw `svc_…` value once, in `token`. */
export const createToken = (name: string) =>
  request<DashboardData<'tokenCreated'>>('POST', '/api/tokens', { body: { name } });

export const useCreateToken = () => useMutation(createToken, () => invalidate(tokensKey));
