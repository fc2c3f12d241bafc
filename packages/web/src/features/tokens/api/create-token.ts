import type { DashboardData } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse, text } from '../../../lib/schema';
import { tokensKey } from './get-tokens';

export const createTokenInput = z.object({ name: text({ min: 1, max: 100 }) });

export const checkCreateToken = (values: { name: string }) => parse(createTokenInput, values);

/** The answer carries the raw `svc_…` value once, in `token`. */
export const createToken = (name: string) =>
  request<DashboardData<'tokenCreated'>>('POST', '/api/tokens', { body: { name } });

export const useCreateToken = () => useMutation(createToken, () => invalidate(tokensKey));
