import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { alertMutesKey } from './get-mutes';

export const deleteMute = (serverId: number) => request<unknown>('DELETE', `/api/alerts/mutes/${serverId}`);

export const useDeleteMute = () => useMutation(deleteMute, () => invalidate(alertMutesKey));
