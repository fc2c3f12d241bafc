import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { enrolmentTokensKey } from './get-enrolment-tokens';

export interface EnrolmentTokenInput {
  product_id: number;
  max_uses: number;
  /** How long it works, from now. */
  valid_ms: number;
}

/** The answer carries the raw `enr_…` token and the line to paste, once. */
export const createEnrolmentToken = (input: EnrolmentTokenInput) =>
  request<DashboardData<'enrolmentTokenCreated'>>('POST', '/api/enrolment-tokens', {
    body: { product_id: input.product_id, max_uses: input.max_uses, expires_at: Date.now() + input.valid_ms },
  });

export const useCreateEnrolmentToken = () => useMutation(createEnrolmentToken, () => invalidate(enrolmentTokensKey));
