import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const tokensKey = ['tokens'];

export const getTokens = async () => (await request<DashboardData<'tokens'>>('GET', '/api/tokens')).tokens;

export const useTokens = () => useQuery(tokensKey, getTokens);
