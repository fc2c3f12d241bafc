import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const getCatalog = async () => (await request<DashboardData<'catalog'>>('GET', '/api/catalog')).items;

export const useCatalog = () => useQuery(['catalog'], getCatalog);
