import type { DashboardData } from '@palisade/protocol';
import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { productsKey } from '../../billing/api/get-products';
import { serversKey } from './get-servers';

export const deleteServer = (id: number) => request<DashboardData<'deleted'>>('DELETE', `/api/servers/${id}`);

export const useDeleteServer = (onDone: () => void) =>
  useMutation(deleteServer, () => {
    invalidate(serversKey);
    invalidate(productsKey);
    onDone();
  });
