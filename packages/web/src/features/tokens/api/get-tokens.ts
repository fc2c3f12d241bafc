import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { AccessToken } from '../../../lib/wire';

export const tokensKey = ['tokens'];

export const getTokens = async () => (await request<{ tokens: AccessToken[] }>('GET', '/api/tokens')).tokens;

export const useTokens = () => useQuery(tokensKey, getTokens);
