import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { BillingSummary } from '../../../lib/wire';

export const getBillingSummary = () => request<BillingSummary>('GET', '/api/billing/summary');

export const billingKey = ['billing'];

export const useBillingSummary = () => useQuery(billingKey, getBillingSummary);
