import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const getBillingSummary = () => request<DashboardData<'billing'>>('GET', '/api/billing/summary');

export const billingKey = ['billing'];

export const useBillingSummary = () => useQuery(billingKey, getBillingSummary);
