import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const sessionsKey = ['account', 'sessions'];

export const getSessions = async () =>
  (await request<DashboardData<'sessions'>>('GET', '/api/account/sessions')).sessions;

export const useSessions = () => useQuery(sessionsKey, getSessions, { intervalMs: 60_000 });
