import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const productsKey = ['products'];

export const getProducts = async () => (await request<DashboardData<'products'>>('GET', '/api/products')).products;

export const useProducts = () => useQuery(productsKey, getProducts);
