import { request } from '../../../lib/api';
import { useMutation } from '../../../lib/query';
import type { Enrollment } from '../../../lib/wire';

/** A new daemon token and the `palisade-agent enroll` command, for agents the console cannot reach. */
export const createEnrollment = (id: number) =>
  request<Enrollment>('POST', `/api/servers/${id}/enrollment`, { body: {} });

export const useCreateEnrollment = () => useMutation(createEnrollment);
