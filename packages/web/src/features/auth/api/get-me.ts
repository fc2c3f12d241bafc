import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const meKey = ['me'];

export const getMe = () => request<DashboardData<'me'>>('GET', '/api/account/me');

export const useMe = () => useQuery(meKey, getMe);
