import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { SigningKey } from '../../../lib/wire';

export const keysKey = ['keys'];

export const getKeys = async () => {
  const body = await request<{ keys: SigningKey[] } | SigningKey[]>('GET', '/api/keys');
  return Array.isArray(body) ? body : body.keys;
};

export const useKeys = () => useQuery(keysKey, getKeys);
