import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const enrolmentTokensKey = ['enrolment-tokens'];

export const getEnrolmentTokens = async () =>
  (await request<DashboardData<'enrolmentTokens'>>('GET', '/api/enrolment-tokens')).tokens;

export const useEnrolmentTokens = () => useQuery(enrolmentTokensKey, getEnrolmentTokens);
