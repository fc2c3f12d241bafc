import type { DashboardData } from '@palisade/protocol';
import { z } from 'zod';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { parse, text } from '../../../lib/schema';
import { benchmarksKey } from './get-benchmarks';

export const runBenchmarkInput = z.object({ label: text({ min: 1, max: 100 }) });

export const checkRunBenchmark = (values: { label: string }) => parse(runBenchmarkInput, values);

export const runBenchmark = (input: { id: number; label: string }) =>
  request<DashboardData<'run'>>('POST', `/api/servers/${input.id}/benchmarks`, { body: { label: input.label } });

export const useRunBenchmark = (id: number) => useMutation(runBenchmark, () => invalidate(benchmarksKey(id)));
