import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';

export const alertMutesKey = ['alerts', 'mutes'];

export const getMutes = () => request<{ mutes: { server_id: number; until: number }[] }>('GET', '/api/alerts/mutes');

export const useAlertMutes = () => useQuery(alertMutesKey, getMutes, { intervalMs: 60_000 });
