import type { DashboardData, Product } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { billingKey } from './get-billing-summary';
import { productsKey } from './get-products';

export const addProduct = (catalogId: number) =>
  request<DashboardData<'product'>>('POST', '/api/products', { body: { catalog_id: catalogId } });

export const useAddProduct = (onDone?: (product: Product) => void) =>
  useMutation(addProduct, (out) => {
    invalidate(productsKey);
    invalidate(billingKey);
    onDone?.(out.product);
  });
