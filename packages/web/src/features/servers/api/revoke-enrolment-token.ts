import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { enrolmentTokensKey } from './get-enrolment-tokens';

export const revokeEnrolmentToken = (id: number) =>
  request<DashboardData<'revoked'>>('DELETE', `/api/enrolment-tokens/${id}`);

export const useRevokeEnrolmentToken = () => useMutation(revokeEnrolmentToken, () => invalidate(enrolmentTokensKey));
