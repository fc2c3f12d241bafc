import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { CatalogItem } from '../../../lib/wire';

export const getCatalog = async () => (await request<{ items: CatalogItem[] }>('GET', '/api/catalog')).items;

export const useCatalog = () => useQuery(['catalog'], getCatalog);
