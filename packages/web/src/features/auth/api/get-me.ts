import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { Me } from '../../../lib/wire';

export const meKey = ['me'];

export const getMe = () => request<Me>('GET', '/api/account/me');

export const useMe = () => useQuery(meKey, getMe);
