import { benchmarkRequest, type DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { checkRequest } from '../../../lib/schema';
import { benchmarksKey } from './get-benchmarks';

export const checkRunBenchmark = (values: { label: string }) => checkRequest(benchmarkRequest, values);

export const runBenchmark = (input: { id: number; label: string }) =>
  request<DashboardData<'run'>>('POST', `/api/servers/${input.id}/benchmarks`, { body: { label: input.label } });

export const useRunBenchmark = (id: number) => useMutation(runBenchmark, () => invalidate(benchmarksKey(id)));
