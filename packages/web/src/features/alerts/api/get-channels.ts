import { request } from '../../../lib/api';
import { useQuery } from '../../../lib/query';
import type { AlertChannel } from './types';

export const alertChannelsKey = ['alerts', 'channels'];

export const getChannels = () => request<{ channels: AlertChannel[] }>('GET', '/api/alerts/channels');

export const useAlertChannels = () => useQuery(alertChannelsKey, getChannels, { intervalMs: 30_000 });
