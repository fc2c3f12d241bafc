import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const keysKey = ['keys'];

export const getKeys = async () => (await request<DashboardData<'keys'>>('GET', '/api/keys')).keys;

export const useKeys = () => useQuery(keysKey, getKeys);
