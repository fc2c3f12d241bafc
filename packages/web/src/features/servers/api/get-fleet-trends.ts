import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const fleetTrendsKey = ['servers', 'trends'];

export const getFleetTrends = () => request<DashboardData<'fleetTrends'>>('GET', '/api/fleet/trends');

/** Each server's figures now and its last hour of CPU; the buckets are 5 minutes, so once a minute is enough. */
export const useFleetTrends = () => useQuery(fleetTrendsKey, getFleetTrends, { intervalMs: 60_000 });
