import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const serversKey = ['servers'];

export const getServers = () => request<DashboardData<'servers'>>('GET', '/api/servers');

/** The fleet, refreshed every 15 s so online states and scores stay current. */
export const useServers = () => useQuery(serversKey, getServers, { intervalMs: 15_000 });
