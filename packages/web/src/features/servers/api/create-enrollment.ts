import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useMutation } from '../../../lib/query';

/** A new daemon token and the `palisade-agent enroll` command, for agents the console cannot reach. */
export const createEnrollment = (id: number) =>
  request<DashboardData<'enrollment'>>('POST', `/api/servers/${id}/enrollment`, { body: {} });

export const useCreateEnrollment = () => useMutation(createEnrollment);
