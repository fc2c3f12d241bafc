import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { alertChannelsKey } from './get-channels';

export const deleteChannel = (id: number) => request<unknown>('DELETE', `/api/alerts/channels/${id}`);

export const useDeleteChannel = () => useMutation(deleteChannel, () => invalidate(alertChannelsKey));
