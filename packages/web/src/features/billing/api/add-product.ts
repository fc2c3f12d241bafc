import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import type { Product } from '../../../lib/wire';
import { billingKey } from './get-billing-summary';
import { productsKey } from './get-products';

export const addProduct = (catalogId: number) =>
  request<{ product: Product }>('POST', '/api/products', { body: { catalog_id: catalogId } });

export const useAddProduct = (onDone?: (product: Product) => void) =>
  useMutation(addProduct, (out) => {
    invalidate(productsKey);
    invalidate(billingKey);
    onDone?.(out.product);
  });
