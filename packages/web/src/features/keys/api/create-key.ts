import type { DashboardData } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse, text } from '../../../lib/schema';
import { keysKey } from './get-keys';

export const createKeyInput = z.object({ name: text({ min: 1, max: 100 }) });

export const checkCreateKey = (values: { name: string }) => parse(createKeyInput, values);

/** The answer carries the raw `svck_…` value once, in `key`. */
export const createKey = (name: string) =>
  request<DashboardData<'keyCreated'>>('POST', '/api/keys', { body: { name } });

export const useCreateKey = () => useMutation(createKey, () => invalidate(keysKey));
