import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { Product } from '../../../lib/wire';

export const productsKey = ['products'];

export const getProducts = async () => (await request<{ products: Product[] }>('GET', '/api/products')).products;

export const useProducts = () => useQuery(productsKey, getProducts);
