import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { BenchmarkRunView } from '../../../lib/wire';
import { serverKey } from './get-server';

export const benchmarksKey = (id: number) => [...serverKey(id), 'benchmarks'];

export const getBenchmarks = (id: number) =>
  request<{ runs: BenchmarkRunView[] }>('GET', `/api/servers/${id}/benchmarks`);

/** Every run with its log; refreshed every 5 s so a running benchmark's progress shows. */
export const useBenchmarks = (id: number) => useQuery(benchmarksKey(id), () => getBenchmarks(id), { intervalMs: 5000 });
