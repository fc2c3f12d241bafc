import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { billingKey } from './get-billing-summary';
import { productsKey } from './get-products';

export const removeProduct = (id: number) => request<DashboardData<'deleted'>>('DELETE', `/api/products/${id}`);

/** Removes a product; the console refuses (409, in words) while servers or enrolment tokens use it. */
export const useRemoveProduct = () =>
  useMutation(removeProduct, () => {
    invalidate(productsKey);
    invalidate(billingKey);
  });
