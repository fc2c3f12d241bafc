import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import { serverKey } from './get-server';

export const benchmarksKey = (id: number) => [...serverKey(id), 'benchmarks'];

export const getBenchmarks = (id: number) => request<DashboardData<'runs'>>('GET', `/api/servers/${id}/benchmarks`);

/** Every run with its log; refreshed every 5 s so a running benchmark's progress shows. */
export const useBenchmarks = (id: number) => useQuery(benchmarksKey(id), () => getBenchmarks(id), { intervalMs: 5000 });
