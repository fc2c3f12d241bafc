import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

/** Every read about one server sits under this key, so invalidating it refreshes them all. */
export const serverKey = (id: number) => ['server', id];

export const getServer = (id: number) => request<DashboardData<'server'>>('GET', `/api/servers/${id}`);

/** One server's record; refreshed every 30 s for the online state and score. */
export const useServer = (id: number) => useQuery(serverKey(id), () => getServer(id), { intervalMs: 30_000 });
