import { createKeyRequest, type DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { keysKey } from './get-keys';

export const checkCreateKey = (values: { name: string }) => checkRequest(createKeyRequest, values);

/** The answer carries the raw `svck_…` value once, in `key`. */
export const createKey = (name: string) =>
  request<DashboardData<'keyCreated'>>('POST', '/api/keys', { body: { name } });

export const useCreateKey = () => useMutation(createKey, () => invalidate(keysKey));
