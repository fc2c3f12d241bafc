import { request } from '../../../lib/api';
import { invalidate, useMutation } from '../../../lib/query';
import { alertMutesKey } from './get-mutes';

/** Mutes a server's alerts until `until` (maintenance); states still change, nothing is sent. */
export const setMute = ({ serverId, until }: { serverId: number; until: number }) =>
  request<unknown>('PUT', `/api/alerts/mutes/${serverId}`, { body: { until } });

export const useSetMute = () => useMutation(setMute, () => invalidate(alertMutesKey));
